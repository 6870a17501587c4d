# A browser queue of three leaves no return queue.
show {
  name       = "lint-browser-queue"
  size       = "1280x720"
  frame_rate = "30"
}

canvas {
  browser_frame_queue = 3
}

source "browser" "gfx" {
  count  = 2
  socket = "/run/onair/gfx-${count.index}.sock"
}

scene "gfx" {
  layer {
    source = source.gfx[0]
  }
  layer {
    source = source.gfx[1]
  }
}

bus "program" "pgm" {
  scene = scene.gfx
}

output "null" "pgm" {
  bus = bus.pgm
}
