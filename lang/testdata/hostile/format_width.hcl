# A gigabyte of padding.
show {
  name       = "hostile"
  size       = "1920x1080"
  frame_rate = "30"
}
locals {
  wide = format("%1000000000d", 1)
}
