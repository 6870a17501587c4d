show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}
