show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

moved {
  from = "source.a"
  to   = source.b
}
