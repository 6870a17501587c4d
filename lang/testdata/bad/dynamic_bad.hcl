show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

source "test_pattern" "cam" {
  count = 2
}
scene "s" {
  dynamic "layer" {
    for_each = [0, 1, 2]
    content {
      source = source.cam[layer.value]
    }
  }
}
