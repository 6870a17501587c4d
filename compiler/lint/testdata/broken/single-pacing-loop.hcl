# Sixty sources on one pacing loop.
canvas {
  pacing_loops = 1
}

show {
  name       = "lint-one-loop"
  size       = "1920x1080"
  frame_rate = "30"
  profile    = "nvidia_l4"
}

source "test_pattern" "tp" {
  count   = 60
  pattern = "bars"
}

scene "full" {
  count = 60
  layer {
    source = source.tp[count.index]
  }
}

bus "program" "pgm" {
  scene = scene.full[0]
}

output "null" "pgm" {
  bus = bus.pgm
}
