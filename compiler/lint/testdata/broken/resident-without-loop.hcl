# A resident raw source that plays once.
show {
  name       = "lint-resident-once"
  size       = "1280x720"
  frame_rate = "30"
}

canvas {
  raw_upload = "resident"
}

source "raw_file" "vt" {
  path   = "media/once.nv12"
  format = "nv12"
  loop   = false
}

scene "vt" {
  layer {
    source = source.vt
  }
}

bus "program" "pgm" {
  scene = scene.vt
}

output "null" "pgm" {
  bus = bus.pgm
}
