# HEVC and H.264, Annex B and MPEG-TS, in one show: the four committed test
# clips (nodes/media/es/testdata, 640x360, 30 pictures each) looping in a
# 2x2 grid on Program, one of them alone on an AUX bus. On the CPU backend
# an ffmpeg process decodes each file; on the CUDA backend NVDEC does, on a
# decode loop, byte for byte the same pictures.
#
#   onair run -backend cpu -duration 10s examples/decode-mix.hcl
#   onair run -backend cuda -duration 10s examples/decode-mix.hcl

variable "out" {
  default     = "../out"
  description = "Where the two recordings go (relative to this file)."
}

show {
  name       = "decode-mix"
  size       = "640x360"
  frame_rate = "30"
}

locals {
  clips = {
    hevc_annexb = { kind = "hevc", path = "hevc8.hevc" }
    h264_annexb = { kind = "h264", path = "h264.264" }
    hevc_ts     = { kind = "hevc", path = "hevc8.ts" }
    h264_ts     = { kind = "h264", path = "h264.ts" }
  }
}

source "hevc_file" "hevc" {
  for_each = { for k, c in local.clips : k => c if c.kind == "hevc" }
  path     = "../nodes/media/es/testdata/${each.value.path}"
  size     = "640x360"
  loop     = true
}

source "h264_file" "h264" {
  for_each = { for k, c in local.clips : k => c if c.kind == "h264" }
  path     = "../nodes/media/es/testdata/${each.value.path}"
  size     = "640x360"
  loop     = true
}

scene "grid" {
  dynamic "layer" {
    for_each = [source.hevc["hevc_annexb"], source.h264["h264_annexb"], source.hevc["hevc_ts"], source.h264["h264_ts"]]
    content {
      source = layer.value
      rect   = [(layer.key % 2) * 320, floor(layer.key / 2) * 180, 320, 180]
    }
  }
}

bus "program" "pgm" {
  scene = scene.grid
}

bus "aux" "ts" {
  source = source.h264["h264_ts"]
}

output "record" "pgm" {
  bus  = bus.pgm
  path = "${var.out}/decode-mix-pgm.y4m"
}

output "record" "ts" {
  bus  = bus.ts
  path = "${var.out}/decode-mix-ts.y4m"
}
