# The seeds' show: 192 sources at 1080p30 on one NVIDIA L4.
#
# 105 HEVC files decoded on NVDEC, 47 raw NV12 files, 40 browser windows;
# two Program buses and 20 AUX buses; 256 scenes (one full-frame scene per
# source and 64 quad splits); 24 encoded outputs. The canvas settings are
# the ones the seeds' demo ran after its optimisation evenings.

variable "hevc_clips" {
  type        = list(string)
  description = "HEVC clips the cameras loop over."
  default     = ["../media/demo/clip0.hevc", "../media/demo/clip1.hevc", "../media/demo/clip2.hevc"]
}

variable "raw_clips" {
  type        = number
  description = "How many distinct two-second raw NV12 clips the VT sources share."
  default     = 4
}

locals {
  # Every source in show order: the index into this list is the source's
  # number on the multiviewer.
  all = concat(source.cam, source.vt, source.gfx)
  # Quad splits: the four corners of the canvas.
  corner = [for i in range(4) : [(i % 2) * 960, floor(i / 2) * 540, 960, 540]]
}

show {
  name       = "demo-192"
  size       = "1920x1080"
  frame_rate = "30"
  format     = "nv12"
  profile    = "nvidia_l4"
}

canvas {
  raw_upload          = "resident"
  input_routing       = "input"
  source_fan_out      = "event_loop"
  input_poll_ms       = 8
  aux_input_poll_ms   = 8
  pacing_loops        = 4
  decoder_placement   = "decode_loops"
  decode_loops        = 0 # the profile's
  browser_frame_queue = 9
  import_ttl_ms       = 10000
  frame_metadata      = []
}

source "hevc_file" "cam" {
  count = 105
  path  = var.hevc_clips[count.index % length(var.hevc_clips)]
  loop  = true
}

source "raw_file" "vt" {
  count  = 47
  path   = "../media/demo/raw${count.index % var.raw_clips}.nv12"
  format = "nv12"
  size   = "1920x1080"
  loop   = true
}

source "browser" "gfx" {
  count  = 40
  socket = "/run/onair/gfx-${count.index}.sock"
}

# One full-frame scene per source.
scene "full" {
  count = length(local.all)
  layer {
    source = local.all[count.index]
  }
}

# 64 quad splits walking through the sources four at a time.
scene "quad" {
  count = 64
  dynamic "layer" {
    for_each = local.corner
    content {
      source = local.all[(count.index * 4 + layer.key) % length(local.all)]
      rect   = layer.value
      fit    = "contain"
    }
  }
}

bus "program" "a" {
  scene = scene.quad[0]
}

bus "program" "b" {
  scene = scene.full[0]
}

bus "aux" "mon" {
  count  = 20
  source = local.all[count.index * 9]
}

# Each Program bus is encoded twice (a contribution feed and a web feed);
# each AUX bus once.
output "ffmpeg" "pgm" {
  for_each = {
    a_contrib = { bus = bus.a, rate = "12M", port = 5000 }
    a_web     = { bus = bus.a, rate = "4M", port = 5001 }
    b_contrib = { bus = bus.b, rate = "12M", port = 5002 }
    b_web     = { bus = bus.b, rate = "4M", port = 5003 }
  }
  bus  = each.value.bus
  args = ["-c:v", "h264_nvenc", "-b:v", each.value.rate, "-f", "mpegts", "udp://127.0.0.1:${each.value.port}"]
}

output "ffmpeg" "mon" {
  count = 20
  bus   = bus.mon[count.index]
  args  = ["-c:v", "h264_nvenc", "-b:v", "2M", "-f", "mpegts", "udp://127.0.0.1:${6000 + count.index}"]
}
