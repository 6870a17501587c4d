# An ignore naming a rule that does not exist (a typo).
show {
  name       = "lint-ignore-unknown"
  size       = "1280x720"
  frame_rate = "30"
}

source "test_pattern" "bars" {
  pattern = "bars"
}

# onair-lint-ignore unused-sorce: the spare is cut in by the director's panel in part two
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

bus "aux" "idle" {
  source = source.bars
}

output "null" "pgm" {
  bus = bus.pgm
}
