# A small show with one source of every kind, for the golden plans.
show {
  name       = "mixed"
  size       = "320x180"
  frame_rate = "30"
  format     = "nv12"
  profile    = "nvidia_l4"
}

canvas {
  raw_upload     = "resident"
  input_routing  = "input"
  source_fan_out = "event_loop"
  pacing_loops   = 2
  frame_metadata = ["decode_time"]
}

source "hevc_file" "cam" {
  count   = 2
  path    = "media/cam${count.index}.hevc"
  streams = count.index + 1
}

source "raw_file" "vt" {
  path   = "media/vt.nv12"
  format = "nv12"
  size   = "320x180"
}

source "browser" "gfx" {
  socket = "/run/onair/gfx.sock"
}

source "test_pattern" "bars" {
  pattern = "bars"
}

scene "two" {
  layer {
    source = source.cam[0]
    rect   = [0, 0, 160, 180]
  }
  layer {
    source = source.vt
    rect   = [160, 0, 160, 180]
  }
  layer {
    source = source.gfx
    z      = 1
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

output "preview" "mon" {
  bus         = bus.mon
  interval_ms = 500
}
