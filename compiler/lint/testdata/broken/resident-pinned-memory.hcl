# Twelve 4K60 raw clips kept resident: the compiler estimates two seconds of
# frames for each file it cannot read, 1.5 GB each, pinned and unswappable.
show {
  name       = "lint-resident"
  size       = "3840x2160"
  frame_rate = "60"
  profile    = "nvidia_l4"
}

canvas {
  raw_upload = "resident"
}

source "raw_file" "vt" {
  count  = 12
  path   = "media/uhd${count.index}.nv12"
  format = "nv12"
  loop   = true
}

scene "vt" {
  count = 12
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
