# The seeds' show as issue 14 measures it: 105 HEVC 1080p30 sources, 47 raw
# NV12 sources and 40 browser sources (192), 256 scenes, two Program buses
# and 20 AUX buses, every bus's outputs discarded (the H200 has no encoder).
#
# Every count is a variable, so the same file runs the seeds' show, the
# source-limit ramp (the seeds' mix of kinds scaled up) and a small CPU
# test; `settings` picks onair's best canvas or the seeds' "before" one.
# bench/seeds/README.md says how to run it and what differs from the seeds.
#
#   onair plan -backend cuda bench/seeds/seeds.hcl
#   onair plan -backend cuda -var settings=before bench/seeds/seeds.hcl
#   onair bench -backend cuda -var n_hevc=210 -var n_raw=94 -var n_browser=80 ...

variable "n_hevc" {
  type        = number
  default     = 105
  description = "HEVC file sources (decoded on NVDEC)."
}

variable "live" {
  type        = string
  default     = ""
  description = "How the HEVC sources arrive: \"\" from their files, \"srt\" or \"udp\" as live streams on ports live_port, live_port+1, ... (bench/seeds/run.sh MODE=live feeds them with onair send)."
  validation {
    condition     = contains(["", "srt", "udp"], var.live)
    error_message = "live must be \"\", srt or udp."
  }
}

variable "live_port" {
  type        = number
  default     = 20000
  description = "The first live HEVC source's port."
}

variable "n_raw" {
  type        = number
  default     = 47
  description = "Raw NV12 file sources."
}

variable "n_browser" {
  type        = number
  default     = 40
  description = "Browser sources, each fed by its own producer on socket_dir/gfx-N.sock."
}

variable "n_pattern" {
  type        = number
  default     = 0
  description = "Test-pattern sources (each its line-up tone: issue 25's show with sound on every source)."
}

variable "aux" {
  type        = number
  default     = 20
  description = "AUX buses, each showing one source."
}

variable "scenes" {
  type        = number
  default     = 256
  description = "Scenes: one full-frame scene per source, the rest quad splits (at least 1)."
}

variable "fps" {
  type        = string
  default     = "30"
  description = "The show's frame rate; every source paces at it (a 30 fps clip in a 60 fps show plays twice as fast, so it costs a 60 fps camera's decoding)."
}

variable "width" {
  type    = number
  default = 1920
}

variable "height" {
  type    = number
  default = 1080
}

variable "settings" {
  type        = string
  default     = "best"
  description = "best: onair's canvas; before: the seeds' settings before their optimisation evenings."
  validation {
    condition     = contains(["best", "before"], var.settings)
    error_message = "settings must be best or before."
  }
}

variable "canvas" {
  type        = map(any)
  default     = {}
  description = "Canvas keys that override the chosen settings, e.g. -var 'canvas={raw_upload=\"direct\"}'."
}

variable "media" {
  type        = string
  default     = "media"
  description = "Directory of the clips, relative to this file or absolute (bench/seeds/run.sh passes $MEDIA)."
}

variable "raw_dir" {
  type        = string
  default     = ""
  description = "Directory of the raw clips when not var.media (bench/seeds/run.sh generates them on the GPU machine)."
}

variable "hevc_clips" {
  type        = list(string)
  default     = ["clip0.hevc", "clip1.hevc", "clip2.hevc", "clip3.hevc"]
  description = "HEVC clips in var.media the HEVC sources loop over (reused by path)."
}

variable "raw_clips" {
  type        = list(string)
  default     = ["raw0.nv12", "raw1.nv12", "raw2.nv12", "raw3.nv12"]
  description = "Raw NV12 clips in var.raw_dir (or var.media) the raw sources loop over."
}

variable "socket_dir" {
  type        = string
  default     = "/tmp/onair-seeds"
  description = "Directory of the browser sources' sockets: gfx-0.sock, gfx-1.sock, ..."
}

variable "n_enc_file" {
  type        = number
  default     = 0
  description = "Delivery outputs recording Program A to MPEG-TS files in enc_dir (1080p30 encodes beside the seeds' show: bench/seeds/run.sh MODE=encoders)."
}

variable "n_enc_stream" {
  type        = number
  default     = 0
  description = "Delivery outputs streaming Program A over UDP to 127.0.0.1, ports enc_port and up (nobody need listen)."
}

variable "enc_dir" {
  type        = string
  default     = "enc"
  description = "Directory of the file encodes' recordings."
}

variable "enc_port" {
  type    = number
  default = 20000
}

variable "enc_encoder" {
  type        = string
  default     = "libx264"
  description = "The encodes' encoder (libx264, libx265, or auto)."
}

variable "enc_preset" {
  type    = string
  default = "veryfast"
}

variable "profile" {
  type        = string
  default     = "nvidia_h200"
  description = "Capacity profile the plan's estimates and budgets use."
}

locals {
  # The two canvases the issue compares. `decoders` is where NVDEC decoders
  # run: a few decode loops, or a thread each as the seeds' FFmpeg did;
  # `parser` whose parser reads HEVC for NVDEC (onair's, or NVIDIA's as
  # the seeds' FFmpeg used through cuvid); `procs` the processors Go's
  # scheduler runs on (0: Go's default, one per core). Best keeps Go's
  # default: narrowed to 4, the loops waited for a processor (timers late
  # by up to 8 ms at p99 on the H200, ticks at p99.9 0.30-0.37 of a period
  # over 5 minutes: bench/timing/results-2026-12-02-aux-poll); with 16,
  # every bus's p99.9 was 0.06 and the longest 0.23
  # (bench/timing/results-2026-12-02d-procs).
  settings = {
    best = {
      raw_upload        = "resident"
      input_routing     = "input"
      source_fan_out    = "event_loop"
      input_poll_ms     = 8
      aux_input_poll_ms = 8
      pacing_loops      = 4
      decoders          = "decode_loops"
      parser            = "onair"
      procs             = 0
    }
    before = {
      raw_upload        = "pinned"
      input_routing     = "demux"
      source_fan_out    = "thread"
      input_poll_ms     = 0
      aux_input_poll_ms = 0
      pacing_loops      = 1
      decoders          = "thread"
      parser            = "nvidia"
      procs             = 0
    }
  }
  c       = merge(local.settings[var.settings], var.canvas)
  raw_dir = var.raw_dir != "" ? var.raw_dir : var.media

  # Every source has a stable key, "s" and its number in show order (the
  # number on the multiviewer): HEVC first, then raw, then browser, then test patterns. Scenes
  # and buses reach a source through its key (local.all), never through
  # its place in a list, so turning one source into another kind (n_hevc
  # one up, n_raw one down) changes that source and what shows it, not
  # every source after it (bench/seeds/README.md has the diff).
  n      = var.n_hevc + var.n_raw + var.n_browser + var.n_pattern
  n_gfx  = var.n_hevc + var.n_raw + var.n_browser
  keys   = [for i in range(local.n) : format("s%03d", i)]
  hevc   = { for i in range(var.n_hevc) : local.keys[i] => i }
  raw    = { for i in range(var.n_hevc, var.n_hevc + var.n_raw) : local.keys[i] => i }
  gfx    = { for i in range(var.n_hevc + var.n_raw, local.n_gfx) : local.keys[i] => i - var.n_hevc - var.n_raw }
  tone   = { for i in range(local.n_gfx, local.n) : local.keys[i] => i }
  all    = merge(source.cam, source.cam_srt, source.cam_udp, source.vt, source.gfx, source.tone)
  quads = max(1, var.scenes - local.n)
  # A quad split: the four corners of the canvas.
  corner = [for i in range(4) : [(i % 2) * var.width / 2, floor(i / 2) * var.height / 2, var.width / 2, var.height / 2]]
}

show {
  name       = "seeds-${var.settings}-${local.n}"
  size       = "${var.width}x${var.height}"
  frame_rate = var.fps
  format     = "nv12"
  profile    = var.profile
}

canvas {
  raw_upload          = local.c.raw_upload
  input_routing       = local.c.input_routing
  source_fan_out      = local.c.source_fan_out
  input_poll_ms       = local.c.input_poll_ms
  aux_input_poll_ms   = local.c.aux_input_poll_ms
  pacing_loops        = local.c.pacing_loops
  decoder_placement   = local.c.decoders
  nvdec_parser        = local.c.parser
  go_procs            = local.c.procs
  browser_frame_queue = 9
  import_ttl_ms       = 10000
  frame_metadata      = []
}

# A source's clip follows its number, so it keeps its clip when the mix
# of kinds changes; browser source i listens on gfx-i.sock (run.sh starts
# producers 0 to n_browser - 1).
source "hevc_file" "cam" {
  for_each = { for k, v in local.hevc : k => v if var.live == "" }
  path     = "${var.media}/${var.hevc_clips[each.value % length(var.hevc_clips)]}"
  loop     = true
}

# The same HEVC sources arriving live (var.live), each on its own port.
source "srt" "cam_srt" {
  for_each = { for k, v in local.hevc : k => v if var.live == "srt" }
  port     = var.live_port + each.value
}

source "udp" "cam_udp" {
  for_each = { for k, v in local.hevc : k => v if var.live == "udp" }
  port     = var.live_port + each.value
}

source "raw_file" "vt" {
  for_each = local.raw
  path     = "${local.raw_dir}/${var.raw_clips[each.value % length(var.raw_clips)]}"
  format   = "nv12"
  loop     = true
}

source "browser" "gfx" {
  for_each = local.gfx
  socket   = "${var.socket_dir}/gfx-${each.value}.sock"
}

source "test_pattern" "tone" {
  for_each = local.tone
  pattern  = "bars"
}

# One full-frame scene per source, named by its key.
scene "full" {
  for_each = toset(local.keys)
  layer {
    source = local.all[each.key]
  }
}

# Quad splits walking through the sources four at a time.
scene "quad" {
  count = local.quads
  dynamic "layer" {
    for_each = local.corner
    content {
      source = local.all[local.keys[(count.index * 4 + layer.key) % local.n]]
      rect   = layer.value
      fit    = "contain"
    }
  }
}

bus "program" "a" {
  scene = scene.quad[0]
}

bus "program" "b" {
  scene = scene.full[local.keys[0]]
}

bus "aux" "mon" {
  count  = var.aux
  source = local.all[local.keys[(count.index * 9) % local.n]]
}

# The seeds encoded each Program bus twice and each AUX bus once (24
# encodes). The H200 has no NVENC: the same 24 outputs discard their frames
# on the GPU.
output "null" "pgm" {
  for_each = { a_contrib = bus.a, a_web = bus.a, b_contrib = bus.b, b_web = bus.b }
  bus      = each.value
}

# Encodes beside the show (0 by default): what the H200's CPU sustains.
output "file" "enc_file" {
  count         = var.n_enc_file
  bus           = bus.a
  path          = "${var.enc_dir}/enc-${count.index}.ts"
  allow_outside = true # run.sh writes them under its OUT
  video {
    encoder = var.enc_encoder
    preset  = var.enc_preset
  }
}

output "stream" "enc_udp" {
  count = var.n_enc_stream
  bus   = bus.a
  url   = "udp://127.0.0.1:${var.enc_port + count.index}?pkt_size=1316"
  video {
    encoder = var.enc_encoder
    preset  = var.enc_preset
  }
}

output "null" "mon" {
  count = var.aux
  bus   = bus.mon[count.index]
}
