# The show on air that every case changes one thing of.
show {
  name       = "diff-base"
  size       = "1280x720"
  frame_rate = "30"
}

canvas {
  raw_upload = "direct"
}

source "hevc_file" "cam" {
  count = 2
  path  = "media/cam${count.index}.hevc"
}

source "raw_file" "vt" {
  path   = "media/vt.nv12"
  format = "nv12"
  size   = "1280x720"
}

source "test_pattern" "bars" {
  pattern = "bars"
}

scene "two" {
  layer {
    source = source.cam[0]
    rect   = [0, 0, 640, 720]
  }
  layer {
    source = source.vt
    rect   = [640, 0, 640, 720]
  }
}

scene "bars" {
  layer {
    source = source.bars
  }
}

bus "program" "pgm" {
  scene = scene.two
}

bus "aux" "mon" {
  source = source.cam[1]
}

output "record" "pgm" {
  bus  = bus.pgm
  path = "out/pgm.y4m"
}

output "null" "mon" {
  bus = bus.mon
}

tally "tsl5" "desk" {
  address = "10.0.0.5"
  port    = 8900
}
