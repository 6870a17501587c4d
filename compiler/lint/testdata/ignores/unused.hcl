# An ignore left behind after the finding was fixed.
show {
  name       = "lint-ignore-unused"
  size       = "1280x720"
  frame_rate = "30"
}

# onair-lint-ignore unused-source: bars used to be spare
source "test_pattern" "bars" {
  pattern = "bars"
}

scene "bars" {
  layer {
    source = source.bars
  }
}

bus "program" "pgm" {
  scene = scene.bars
}

output "null" "pgm" {
  bus = bus.pgm
}
