# Issue 23's looped clips: an HEVC, an H.264 and an MPEG-TS (H.264) clip of
# 2 s each, looped, every one on an AUX bus of its own and all three on a
# Program bus, every output discarded. A clean run counts no underrun, drop,
# repeat or missed deadline: each loop point is seamless.
#
#   onair run -backend cuda -var media=DIR bench/timing/loops.hcl
#
# make timing-bench writes the clips (loop.hevc, loop.264, loop.ts) into
# .device/timing/media; bench/timing/run.sh (MODE=loops) plays them.

variable "media" {
  type        = string
  default     = "../../.device/timing/media"
  description = "The directory holding loop.hevc, loop.264 and loop.ts."
}

variable "width" {
  type    = number
  default = 1920
}

variable "height" {
  type    = number
  default = 1080
}

show {
  name       = "timing-loops"
  size       = "${var.width}x${var.height}"
  frame_rate = "30"
  format     = "nv12"
}

source "hevc_file" "hevc" {
  path = "${var.media}/loop.hevc"
  loop = true
}

source "h264_file" "h264" {
  path = "${var.media}/loop.264"
  loop = true
}

source "h264_file" "ts" {
  path = "${var.media}/loop.ts"
  loop = true
}

scene "all" {
  dynamic "layer" {
    for_each = [source.hevc, source.h264, source.ts]
    content {
      source = layer.value
      rect   = [layer.key * floor(var.width / 3), 0, floor(var.width / 3), floor(var.height / 3)]
      fit    = "contain"
    }
  }
}

bus "program" "pgm" {
  scene = scene.all
}

bus "aux" "hevc" {
  source = source.hevc
}

bus "aux" "h264" {
  source = source.h264
}

bus "aux" "ts" {
  source = source.ts
}

output "null" "pgm" {
  bus = bus.pgm
}

output "null" "hevc" {
  bus = bus.hevc
}

output "null" "h264" {
  bus = bus.h264
}

output "null" "ts" {
  bus = bus.ts
}
