# The cross product of four 100-element lists: 100 million tuples.
show {
  name       = "hostile"
  size       = "1920x1080"
  frame_rate = "30"
}
locals {
  all = setproduct(range(100), range(100), range(100), range(100))
}
