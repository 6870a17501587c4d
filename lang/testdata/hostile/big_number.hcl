# A number with a hundred million digits, written out by a template.
show {
  name       = "hostile"
  size       = "1920x1080"
  frame_rate = "30"
}
locals {
  digits = "${1e100000000}"
}
