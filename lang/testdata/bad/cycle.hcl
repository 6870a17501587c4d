show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

locals {
  a = local.b
  b = local.c
  c = local.a
}
