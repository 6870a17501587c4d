# shared-output-path cannot be ignored, whatever the reason says.
show {
  name       = "lint-ignore-refused"
  size       = "1280x720"
  frame_rate = "30"
}

source "test_pattern" "bars" {
  pattern = "bars"
}

scene "bars" {
  layer {
    source = source.bars
  }
}

bus "program" "a" {
  scene = scene.bars
}

bus "program" "b" {
  scene = scene.bars
}

output "record" "a" {
  bus  = bus.a
  path = "out/pgm.y4m"
}

output "record" "b" {
  bus = bus.b
  # onair-lint-ignore shared-output-path: we only look at the last one written
  path = "out/pgm.y4m"
}
