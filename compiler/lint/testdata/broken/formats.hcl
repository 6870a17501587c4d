# A 10-bit P010 source on an 8-bit NV12 canvas. A compiler check, reported
# by lint like its own rules.
show {
  name       = "lint-formats"
  size       = "1280x720"
  frame_rate = "30"
  format     = "nv12"
}

canvas {
  raw_upload = "direct"
}

source "raw_file" "hdr" {
  path   = "media/hdr.p010"
  format = "p010"
}

scene "bars" {
  layer {
    source = source.hdr
  }
}

bus "program" "pgm" {
  scene = scene.bars
}

output "null" "pgm" {
  bus = bus.pgm
}
