show {
  name       = "rates"
  size       = "640x360"
  frame_rate = "25"
}

source "test_pattern" "fast" {
  frame_rate = "30"
}

source "test_pattern" "slow" {
  frame_rate = "24000/1001"
  pattern    = "ramp"
}

source "test_pattern" "same" {}

scene "all" {
  layer {
    source = source.fast
    rect   = [0, 0, 320, 360]
  }
  layer {
    source = source.slow
    rect   = [320, 0, 320, 360]
  }
  layer {
    source  = source.same
    rect    = [0, 0, 160, 90]
    z       = 1
  }
}

bus "program" "pgm" {
  scene = scene.all
}

bus "aux" "mon" {
  source = source.same
  routes = [source.fast]
}

output "null" "pgm" {
  bus = bus.pgm
}

output "null" "mon" {
  bus = bus.mon
}
