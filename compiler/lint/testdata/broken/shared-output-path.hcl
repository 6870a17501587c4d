# Two recordings into one file.
show {
  name       = "lint-shared-path"
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
  bus  = bus.b
  path = "out/pgm.y4m"
}
