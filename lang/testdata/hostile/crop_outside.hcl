# A crop far outside its source's picture.
show {
  name       = "hostile"
  size       = "640x360"
  frame_rate = "30"
}
source "test_pattern" "bars" {
  size = "320x180"
}
scene "s" {
  layer {
    source = source.bars
    crop   = [0, 0, 20000000, 180]
  }
}
bus "program" "pgm" {
  scene = scene.s
}
