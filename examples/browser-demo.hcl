# A browser source on the CPU backend: a page rendered by a producer (here
# headless Chromium) over the producer protocol, full frame on Program.
#
#   bin/onair run -backend cpu -duration 20s examples/browser-demo.hcl &
#   bin/onair producer -socket examples/gfx.sock -size 640x360
#
# The producer waits for the socket, and the show waits (10 s) for the
# producer's first frame. docs/PRODUCER-PROTOCOL.md says how to write one.
show {
  name       = "browser-demo"
  size       = "640x360"
  frame_rate = "30"
}

source "browser" "gfx" {
  socket = "gfx.sock"
}

source "test_pattern" "bars" {
  pattern = "bars"
}

scene "gfx" {
  layer {
    source = source.gfx
  }
}

scene "bars" {
  layer {
    source = source.bars
  }
}

bus "program" "pgm" {
  scene = scene.gfx
}

output "record" "pgm" {
  bus  = bus.pgm
  path = "../out/browser-pgm.y4m"
}
