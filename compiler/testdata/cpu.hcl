# A show the CPU backend runs: a raw file and two test patterns.
show {
  name       = "cpu"
  size       = "320x180"
  frame_rate = "25"
}

canvas {
  source_fan_out = "thread"
  pacing_loops   = 1
}

source "raw_file" "vt" {
  path   = "media/vt.nv12"
  format = "nv12"
  size   = "320x180"
}

source "test_pattern" "bars" {
  count   = 2
  pattern = "bars"
}

scene "all" {
  layer {
    source = source.vt
  }
  layer {
    source = source.bars[0]
    rect   = [0, 0, 160, 90]
  }
}

bus "program" "pgm" {
  scene = scene.all
}

bus "aux" "bars" {
  source = source.bars[1]
}

output "record" "pgm" {
  bus  = bus.pgm
  path = "out/pgm.y4m"
}

output "null" "bars" {
  bus = bus.bars
}

tally "tsl5" "desk" {
  address = "10.0.0.5"
  port    = 8900
}
