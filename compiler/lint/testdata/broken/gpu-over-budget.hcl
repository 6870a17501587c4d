# Three 8K HEVC sources at 40 fps on two T4s: 683 NVDEC pictures/s each
# (1080p-equivalent), 2,049 of the two GPUs' 2,280, but one GPU has 1,140:
# one source each fits, the third fits nowhere and stays on its bus's GPU.
show {
  name       = "lint-gpu-over-budget"
  size       = "1920x1080"
  frame_rate = "30"
  profile    = "nvidia_t4"
}

canvas {
  gpus = 2
}

source "hevc_file" "cam" {
  count      = 3
  path       = "cam${count.index}.hevc"
  size       = "8192x4320"
  frame_rate = "40"
}

scene "all" {
  layer {
    source = source.cam[0]
  }
  layer {
    source = source.cam[1]
  }
  layer {
    source = source.cam[2]
  }
}

bus "program" "pgm" {
  scene = scene.all
}

output "null" "pgm" {
  bus = bus.pgm
}
