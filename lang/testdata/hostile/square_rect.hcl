# A layer of 2^30 by 2^30 pixels, computed (issue 27): the scaler's
# tables once grew past 2 GB.
show {
  name       = "hostile"
  size       = "640x360"
  frame_rate = "30"
}
locals {
  side = pow(2, 30)
}
source "test_pattern" "bars" {}
scene "big" {
  dynamic "layer" {
    for_each = [local.side]
    content {
      source = source.bars
      rect   = [-layer.value / 2, -layer.value / 2, layer.value, layer.value]
    }
  }
}
bus "program" "pgm" {
  scene = scene.big
}
