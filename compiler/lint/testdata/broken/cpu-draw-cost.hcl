# A canvas the CPU backend cannot draw 30 times a second: linted for the
# cpu backend (the test compiles shows named cpu-* for it).
show {
  name       = "lint-cpu-draw-cost"
  size       = "16384x16384"
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

bus "program" "pgm" {
  scene = scene.bars
}

output "null" "pgm" {
  bus = bus.pgm
}
