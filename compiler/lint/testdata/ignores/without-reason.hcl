# Ignores without reasons ignore nothing, and are errors themselves.
show {
  name       = "lint-ignore-no-reason"
  size       = "1280x720"
  frame_rate = "30"
}

source "test_pattern" "bars" {
  pattern = "bars"
}

# onair-lint-ignore unused-source
source "test_pattern" "spare" {
  pattern = "ramp"
}

scene "bars" {
  layer {
    source = source.bars
  }
}

bus "program" "pgm" {
  scene = scene.bars
}

bus "aux" "idle" { # onair-lint-ignore bus-without-output:
  source = source.bars
}

output "null" "pgm" {
  bus = bus.pgm
}
