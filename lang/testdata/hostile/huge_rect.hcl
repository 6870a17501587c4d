# A layer 2^40 pixels wide (issue 27): it once passed validate and lint,
# and the next cut to its scene ran the show out of memory.
show {
  name       = "hostile"
  size       = "640x360"
  frame_rate = "30"
}
source "test_pattern" "bars" {}
scene "wide" {
  layer {
    source = source.bars
    rect   = [0, 0, 1099511627776, 120]
  }
}
bus "program" "pgm" {
  scene = scene.wide
}
