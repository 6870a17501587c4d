# The seeds' failing show: 17 raw sources at 60 fps through hwupload.
show {
  name       = "lint-hwupload"
  size       = "1920x1080"
  frame_rate = "60"
}

canvas {
  raw_upload = "hwupload"
}

source "raw_file" "vt" {
  count  = 17
  path   = "media/vt${count.index}.nv12"
  format = "nv12"
}

scene "vt" {
  count = 17
  layer {
    source = source.vt[count.index]
  }
}

bus "program" "pgm" {
  scene = scene.vt[0]
}

output "null" "pgm" {
  bus = bus.pgm
}
