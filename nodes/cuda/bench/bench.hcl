# The seeds' isolated raw-upload benchmark and its larger variants: n raw
# NV12 1080p30 sources, each paced and uploaded as canvas.raw_upload says,
# scaled on the GPU into 480x270 cells of 16-layer scenes; the Program bus
# and `aux` AUX buses draw, outputs discarded on the GPU.
variable "mode" { default = "direct" }
variable "n" { default = 8 }
variable "aux" { default = 0 }
variable "size" { default = "1920x1080" }

show {
  name       = "bench-${var.mode}-${var.n}"
  size       = "1920x1080"
  frame_rate = "30"
}
canvas {
  raw_upload = var.mode
}
source "raw_file" "vt" {
  count = var.n
  path  = "m/raw${count.index % 8}.nv12"
  size  = var.size
  loop  = true
}
scene "s" {
  count = ceil(var.n / 16)
  dynamic "layer" {
    for_each = range(count.index * 16, min(var.n, count.index * 16 + 16))
    content {
      source = source.vt[layer.value]
      rect   = [(layer.value % 4) * 480, floor((layer.value % 16) / 4) * 270, 480, 270]
    }
  }
}
bus "program" "pgm" {
  scene = scene.s[0]
}
bus "aux" "mon" {
  count = var.aux
  scene = scene.s[count.index % length(scene.s)]
}
output "null" "pgm" {
  bus = bus.pgm
}
