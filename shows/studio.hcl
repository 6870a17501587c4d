# Studio B: a realistic sixteen-source show.
#
# Six cameras arrive as HEVC files (stand-ins for the ingest recorders),
# four video-tape playbacks as raw NV12, four browser graphics windows and two
# test signals. Program runs a multiview-style set of scenes; four AUX buses
# feed the floor monitors.

variable "media_dir" {
  type        = string
  default     = "../media/studio"
  description = "Where the camera and playback files live."
}

variable "cameras" {
  type = map(object({ file = string, streams = number }))
  default = {
    wide    = { file = "cam-wide.hevc", streams = 1 }
    host    = { file = "cam-host.hevc", streams = 1 }
    guest_1 = { file = "cam-guest1.hevc", streams = 1 }
    guest_2 = { file = "cam-guest2.hevc", streams = 1 }
    crane   = { file = "cam-crane.hevc", streams = 2 }
    roving  = { file = "cam-roving.hevc", streams = 1 }
  }
}

variable "vt_count" {
  type    = number
  default = 4
  validation {
    condition     = var.vt_count >= 1 && var.vt_count <= 8
    error_message = "vt_count must be between 1 and 8: the VT server has eight channels."
  }
}

variable "monitors" {
  type    = list(string)
  default = ["wide", "host", "guest_1", "guest_2"]
}

locals {
  half = { w = 960, h = 540 }
  # The four corners of a 2x2 grid, left to right, top to bottom.
  quad = [for i in range(4) : [(i % 2) * 960, floor(i / 2) * 540, 960, 540]]
}

show {
  name       = "studio-b"
  size       = "1920x1080"
  frame_rate = "30000/1001"
  format     = "nv12"
  profile    = "nvidia_l4"
}

canvas {
  raw_upload     = "direct"
  input_routing  = "input"
  source_fan_out = "event_loop"
  input_poll_ms  = 8
  pacing_loops   = 4
}

source "hevc_file" "cam" {
  for_each = var.cameras
  path     = "${var.media_dir}/${each.value.file}"
  streams  = each.value.streams
  loop     = true
}

source "raw_file" "vt" {
  count  = var.vt_count
  path   = format("%s/vt%02d.nv12", var.media_dir, count.index + 1)
  format = "nv12"
  size   = "1920x1080"
  colour {
    primaries = "bt709"
    transfer  = "bt709"
    matrix    = "bt709"
    range     = "limited"
  }
}

source "browser" "gfx" {
  for_each = toset(["lower_third", "score", "clock", "ticker"])
  socket   = "/run/onair/studio-b/${each.key}.sock"
}

source "test_pattern" "bars" {
  pattern = "bars"
}

source "test_pattern" "slate" {
  pattern = "checker"
}

# One full-frame scene per camera.
scene "cam" {
  for_each = var.cameras
  layer {
    source = source.cam[each.key]
  }
  layer {
    source = source.gfx["lower_third"]
    z      = 10
  }
}

# The four guests and hosts in a 2x2 grid, with the news ticker.
scene "quad" {
  dynamic "layer" {
    for_each = ["wide", "host", "guest_1", "guest_2"]
    content {
      source = source.cam[layer.value]
      rect   = local.quad[layer.key]
      fit    = "contain"
    }
  }
  # The news ticker along the bottom, over the grid.
  layer {
    source = source.gfx["ticker"]
    rect   = [0, 1000, 1920, 80]
    fit    = "stretch"
    z      = 10
  }
}

# A VT playing full frame with the score bug on top.
scene "vt" {
  count = var.vt_count
  layer {
    source = source.vt[count.index]
  }
  layer {
    source  = source.gfx["score"]
    rect    = [1600, 40, 280, 100]
    fit     = "cover"
    opacity = 0.9
  }
}

# Picture in picture: the host over the crane shot.
scene "pip" {
  layer {
    source = source.cam["crane"]
  }
  layer {
    source = source.cam["host"]
    rect   = [1280, 700, local.half.w / 2, local.half.h / 2]
    crop   = [480, 0, 960, 1080]
    fit    = "cover"
  }
}

scene "bars" {
  layer {
    source = source.bars
  }
}

# The slate before the show, with the clock in the corner.
scene "slate" {
  layer {
    source = source.slate
  }
  layer {
    source = source.gfx["clock"]
    rect   = [1600, 960, 280, 80]
    fit    = "contain"
  }
}

bus "program" "pgm" {
  scene = scene.quad
}

bus "aux" "floor" {
  for_each = toset(var.monitors)
  source   = source.cam[each.key]
}

bus "aux" "clean" {
  scene = scene.pip
}

output "ffmpeg" "stream" {
  bus  = bus.pgm
  args = ["-c:v", "libx264", "-preset", "veryfast", "-b:v", "6M", "-f", "mpegts", "udp://127.0.0.1:5000"]
}

output "record" "pgm" {
  bus  = bus.pgm
  path = "../out/studio-pgm.y4m"
}

output "preview" "floor" {
  for_each    = toset(var.monitors)
  bus         = bus.floor[each.key]
  interval_ms = 500
}

output "null" "clean" {
  bus = bus.clean
}
