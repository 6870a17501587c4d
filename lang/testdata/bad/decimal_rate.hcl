show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "29.97"
}
