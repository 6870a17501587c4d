# NVDEC in a show: n HEVC 1080p30 sources (generated clips reused), each
# decoded, paced and scaled on the GPU into 480x270 cells of 16-layer
# scenes; the Program bus draws, its output is discarded on the GPU.
# placement picks decode loops or the seeds' thread per decoder, routing
# input (nvdec_file) or demux (input_rec → demux → dec_video), parser
# NVIDIA's or onair's HEVC parser (nvdec_file only).
variable "n" { default = 105 }
variable "placement" { default = "decode_loops" }
variable "routing" { default = "input" }
variable "loops" { default = 0 }
variable "clips" { default = 2 }
variable "pacing" { default = 4 } # pacing loops (the language's default)
variable "parser" { default = "nvidia" } # HEVC's parser: nvidia or onair (cuda/hevc)
variable "procs" { default = 0 }        # go_procs: Go's processors (0: Go's default)

show {
  name       = "nvdec-${var.n}-${var.placement}-${var.routing}"
  size       = "1920x1080"
  frame_rate = "30"
  profile    = "nvidia_h200"
}
canvas {
  input_routing     = var.routing
  decoder_placement = var.placement
  decode_loops      = var.loops
  pacing_loops      = var.pacing
  nvdec_parser      = var.parser
  go_procs          = var.procs
}
source "hevc_file" "cam" {
  count = var.n
  path  = "media/clip${count.index % var.clips}.hevc"
  size  = "1920x1080"
  loop  = true
}
scene "s" {
  count = ceil(var.n / 16)
  dynamic "layer" {
    for_each = range(count.index * 16, min(var.n, count.index * 16 + 16))
    content {
      source = source.cam[layer.value]
      rect   = [(layer.value % 4) * 480, floor((layer.value % 16) / 4) * 270, 480, 270]
    }
  }
}
bus "program" "pgm" {
  scene = scene.s[0]
}
output "null" "pgm" {
  bus = bus.pgm
}
