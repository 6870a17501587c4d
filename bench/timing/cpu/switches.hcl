# The CPU backend's look at issue 23's hand-off: two Program buses and an
# AUX bus, two test patterns, null outputs. bench/timing/cpu/measure.sh runs
# it for 42 s with a cue every 2 s on both Program buses (cut, fade, wipe)
# and saves /status at 41 s.
show {
  name       = "cpu-switches"
  size       = "640x360"
  frame_rate = "30"
  format     = "nv12"
}

canvas {
  pacing_loops  = 2
  input_poll_ms = 8
}

source "test_pattern" "bars" {
  pattern = "bars"
  size    = "640x360"
}

source "test_pattern" "checker" {
  pattern = "checker"
  size    = "320x180"
}

scene "a" {
  layer {
    source = source.bars
  }
}

scene "b" {
  layer {
    source = source.checker
  }
  layer {
    source = source.bars
    rect   = [440, 20, 180, 100]
  }
}

bus "program" "pgm" {
  scene = scene.a
}
bus "program" "pgm2" {
  scene = scene.b
}

bus "aux" "mon" {
  source = source.checker
}

output "null" "pgm" {
  bus = bus.pgm
}
output "null" "pgm_b" {
  bus = bus.pgm
}
output "null" "pgm2" {
  bus = bus.pgm2
}
output "null" "mon" {
  bus = bus.mon
}
