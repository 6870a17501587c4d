# Three sources run at 60 fps and fall, with three more, on pacing_2 (a source paces on the loop its address picks).
show {
  name       = "lint-imbalance"
  size       = "1280x720"
  frame_rate = "30"
}

canvas {
  pacing_loops = 4
}

source "test_pattern" "tp" {
  count      = 12
  pattern    = "bars"
  frame_rate = count.index % 4 == 0 ? "60" : "30"
}

scene "grid" {
  dynamic "layer" {
    for_each = range(12)
    content {
      source = source.tp[layer.value]
      rect   = [(layer.value % 4) * 320, floor(layer.value / 4) * 240, 320, 240]
    }
  }
}

bus "program" "pgm" {
  scene = scene.grid
}

output "null" "pgm" {
  bus = bus.pgm
}
