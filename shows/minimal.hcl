# The smallest useful show: one source, one scene, one bus, one output.
show {
  name       = "minimal"
  size       = "1280x720"
  frame_rate = "30"
}

source "test_pattern" "bars" {
  pattern = "bars"
}

scene "full" {
  layer {
    source = source.bars
  }
}

bus "program" "main" {
  scene = scene.full
}

output "record" "main" {
  bus  = bus.main
  path = "../out/minimal.y4m"
}
