show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

source "test_pattern" "cam" {}
scene "s" {
  count = 1000
  dynamic "layer" {
    for_each = range(1000)
    content {
      source = source.cam
    }
  }
}
