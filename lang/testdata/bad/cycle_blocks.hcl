show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

locals {
  feeds = [source.a]
  x     = local.y
  y     = local.x
}
source "test_pattern" "a" {
  pattern = local.p
}
locals {
  p = length(local.feeds) > 0 ? "bars" : "ramp"
}
