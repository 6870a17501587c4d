show {
  name       = "split"
  size       = "1920x1080"
  frame_rate = 25
}
