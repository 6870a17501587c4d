show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

canvas {
  frame_metadata = ["decode_time", "decod_time"]
}
