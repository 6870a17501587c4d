# compiled for a backend whose lowering refuses ffmpeg outputs (the tests'
# "refusing" target): the output is refused with the reason.
show {
  name       = "refused-output"
  size       = "1280x720"
  frame_rate = "30"
}

source "test_pattern" "bars" {
}

scene "bars" {
  layer {
    source = source.bars
  }
}

bus "program" "pgm" {
  scene = scene.bars
}

output "ffmpeg" "enc" { # want - "Element cannot run on this backend"
  bus  = bus.pgm
  args = ["-f", "null", "-"]
}
