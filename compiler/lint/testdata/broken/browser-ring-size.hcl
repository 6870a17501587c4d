# The earlier spelling of browser_frame_queue, with a ring larger than any
# window has out.
show {
  name       = "lint-browser-ring-size"
  size       = "1280x720"
  frame_rate = "30"
}

canvas {
  browser_ring_size = 16
}

source "browser" "gfx" {
  socket = "/run/onair/gfx.sock"
}

scene "gfx" {
  layer {
    source = source.gfx
  }
}

bus "program" "pgm" {
  scene = scene.gfx
}

output "null" "pgm" {
  bus = bus.pgm
}
