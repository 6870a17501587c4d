show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30000/1001"
}

canvas {
  timecode_start = "00:01:00;00"
}
