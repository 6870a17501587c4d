# Four HEVC cameras on threads of their own, with onair's parser asked for.
canvas {
  decoder_placement = "thread"
  nvdec_parser      = "onair"
}

show {
  name       = "lint-nvdec-parser-unused"
  size       = "1920x1080"
  frame_rate = "30"
  profile    = "nvidia_l4"
}

source "hevc_file" "cam" {
  count = 4
  path  = "cam.hevc"
  size  = "1920x1080"
  loop  = true
}

scene "cams" {
  dynamic "layer" {
    for_each = range(4)
    content {
      source = source.cam[layer.value]
      rect   = [(layer.value % 4) * 480, floor(layer.value / 4) * 270, 480, 270]
    }
  }
}

bus "program" "pgm" {
  scene = scene.cams
}

output "null" "pgm" {
  bus = bus.pgm
}
