# Three nested for expressions over 1,000 elements: a billion.
show {
  name       = "hostile"
  size       = "1920x1080"
  frame_rate = "30"
}
locals {
  cube = [for a in range(1000) : [for b in range(1000) : [for c in range(1000) : a + b + c]]]
}
