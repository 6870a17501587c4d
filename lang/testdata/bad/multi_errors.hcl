show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

canvas {
  pacing_loops        = 0
  browser_frame_queue = 10
  raw_upload          = "pined"
}
