# A 60 fps source polled every 100 ms: its queue of three cannot hold what
# arrives in between. A compiler check, reported by lint like its own rules.
show {
  name       = "lint-queue-sizing"
  size       = "1280x720"
  frame_rate = "60"
}

canvas {
  input_poll_ms = 100
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
