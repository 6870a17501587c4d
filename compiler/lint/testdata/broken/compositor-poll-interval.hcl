# Compositors that wake for every frame of eight sources.
show {
  name       = "lint-poll"
  size       = "1280x720"
  frame_rate = "30"
}

canvas {
  input_poll_ms     = 0
  aux_input_poll_ms = 0
}

source "test_pattern" "tp" {
  count   = 8
  pattern = "bars"
}

scene "grid" {
  dynamic "layer" {
    for_each = range(8)
    content {
      source = source.tp[layer.value]
      rect   = [(layer.value % 4) * 320, floor(layer.value / 4) * 360, 320, 360]
    }
  }
}

bus "program" "pgm" {
  scene = scene.grid
}

bus "aux" "mon" {
  source = source.tp[0]
}

output "null" "pgm" {
  bus = bus.pgm
}

output "null" "mon" {
  bus = bus.mon
}
