# Issue 29's show: four 1080p raw NV12 sources in a 2x2 grid (each shrunk
# exactly 2:1 into 960x540), one Program bus, a null output, 1080p30.
show {
  name       = "cpu-grid-1080p"
  size       = "1920x1080"
  frame_rate = "30"
  format     = "nv12"
}

source "raw_file" "cam" {
  count  = 4
  path   = "media/cam${count.index}.nv12" # onair media -size 1920x1080 -rate 30 -frames 60 -pattern ramp -id N -o media/camN.nv12
  format = "nv12"
  size   = "1920x1080"
  loop   = true
}

scene "grid" {
  dynamic "layer" {
    for_each = [source.cam[0], source.cam[1], source.cam[2], source.cam[3]]
    content {
      source = layer.value
      rect   = [(layer.key % 2) * 960, floor(layer.key / 2) * 540, 960, 540]
    }
  }
}

bus "program" "pgm" {
  scene = scene.grid
}

output "null" "pgm" {
  bus = bus.pgm
}
