show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

source "test_pattern" "cam" {}
scene "s" {
  layer {
    source = source.cam
  }
}
bus "program" "a" {
  scene = source.cam
}
