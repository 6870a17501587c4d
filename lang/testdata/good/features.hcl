variable "cams" {
  type    = number
  default = 3
  validation {
    condition     = var.cams > 0
    error_message = "Need at least one camera."
  }
}

variable "gfx" {
  type    = map(string)
  default = { left = "/run/l.sock", right = "/run/r.sock" }
}

variable "label" {
  type    = string
  default = "studio"
}

show {
  name       = var.label
  size       = "1280x720"
  frame_rate = "30000/1001"
  format     = "p010"
}

canvas {
  pacing_loops   = 2
  frame_metadata = ["decode_time", "pace_time"]
}

locals {
  all = concat(source.cam, [source.bars])
}

source "hevc_file" "cam" {
  count  = var.cams
  path   = "clip.hevc"
  format = "p010"
}

source "test_pattern" "bars" {
  pattern = "ramp"
  colour {
    primaries = "bt2020"
    transfer  = "pq"
    matrix    = "bt2020nc"
    range     = "full"
  }
}

source "browser" "g" {
  for_each = var.gfx
  socket   = each.value
}

scene "all" {
  dynamic "layer" {
    for_each = local.all
    content {
      source = layer.value
      z      = -layer.key
      rect   = [layer.key * 100, 0, 100, 100]
    }
  }
  layer {
    source  = source.g["left"]
    opacity = 0.5
    crop    = [0, 0, 640, 360]
    fit     = "cover"
  }
}

scene "solo" {
  count = length(source.cam)
  layer {
    source = source.cam[count.index]
  }
}

bus "program" "pgm" {
  scene = scene.all
}

bus "aux" "mon" {
  for_each = toset(["a", "b"])
  scene    = scene.solo[each.key == "a" ? 0 : length(scene.solo) - 1]
}

output "record" "r" {
  bus  = bus.pgm
  path = "out/pgm.y4m"
}

output "preview" "p" {
  for_each = bus.mon
  bus      = each.value
}

output "ffmpeg" "f" {
  bus  = bus.mon["b"]
  args = ["-c:v", "libx264", "out.mp4"]
}

moved {
  from = source.cams[1]
  to   = source.cam[1]
}
