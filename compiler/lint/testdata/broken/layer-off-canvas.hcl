# A layer with no pixel on the canvas: a sign error in its x.
show {
  name       = "lint-layer-off-canvas"
  size       = "640x360"
  frame_rate = "30"
}

source "test_pattern" "bars" {}

scene "pip" {
  layer {
    source = source.bars
  }
  layer {
    source = source.bars
    rect   = [-660, 20, 320, 180]
  }
}

bus "program" "pgm" {
  scene = scene.pip
}

output "null" "pgm" {
  bus = bus.pgm
}
