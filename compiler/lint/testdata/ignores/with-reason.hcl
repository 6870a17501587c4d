# Ignores with reasons: on the line before, and at the end of the line.
show {
  name       = "lint-ignore-reason"
  size       = "1280x720"
  frame_rate = "30"
}

source "test_pattern" "bars" {
  pattern = "bars"
}

# onair-lint-ignore unused-source: the spare is cut in by the director's panel in part two
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

bus "aux" "idle" { # onair-lint-ignore bus-without-output: watched through the status API only
  source = source.bars
}

output "null" "pgm" {
  bus = bus.pgm
}
