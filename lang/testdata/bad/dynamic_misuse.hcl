show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

source "test_pattern" "cam" {}
scene "s" {
  dynamic "layr" {
    for_each = [1]
    content {
      source = source.cam
    }
  }
  dynamic "layer" {
    for_each = [1]
  }
  dynamic "layer" {
    for_each = 3
    content {
      source = source.cam
    }
  }
}
output "ffmpeg" "f" {
  bus  = bus.nope
  args = ["-f", 3, true]
}
