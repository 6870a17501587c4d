show {
  name       = "t"
  size       = "1921x1080"
  frame_rate = "30"
}
