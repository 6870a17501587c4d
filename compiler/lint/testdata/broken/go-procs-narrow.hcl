# Sixteen raw cameras at 60 fps on two pacing loops, with Go narrowed to two
# processors: fewer than the show's threads.
canvas {
  pacing_loops = 2
  go_procs     = 2
}

show {
  name       = "lint-go-procs-narrow"
  size       = "1920x1080"
  frame_rate = "60"
  profile    = "nvidia_h200"
}

source "raw_file" "cam" {
  count = 16
  path  = "cam.nv12"
  size  = "1920x1080"
  loop  = true
}

scene "cams" {
  dynamic "layer" {
    for_each = range(16)
    content {
      source = source.cam[layer.value]
      rect   = [(layer.value % 4) * 480, floor(layer.value / 4) * 270, 480, 270]
    }
  }
}

bus "program" "pgm" {
  scene = scene.cams
}

bus "aux" "multiview" {
  scene = scene.cams
}

output "null" "pgm" {
  bus = bus.pgm
}

output "null" "multiview" {
  bus = bus.multiview
}
