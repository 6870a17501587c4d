# A recording and a stream of 1080p30 at x264's veryfast on the 2-core
# development machine: about 133 % of a core each, 266 % of its 200 %.
show {
  name       = "lint-encodes"
  size       = "1920x1080"
  frame_rate = "30"
  profile    = "cpu_2core"
}

source "test_pattern" "bars" {
  pattern = "bars"
}

scene "bars" {
  layer {
    source = source.bars
  }
}

bus "program" "pgm" {
  scene = scene.bars
}

output "file" "rec" {
  bus  = bus.pgm
  path = "out/pgm.mp4"
}

output "stream" "web" {
  bus = bus.pgm
  url = "srt://127.0.0.1:9000"
}
