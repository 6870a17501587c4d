# Imports dropped after two seconds are imported again.
show {
  name       = "lint-import-ttl"
  size       = "1280x720"
  frame_rate = "30"
}

canvas {
  import_ttl_ms = 2000
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
