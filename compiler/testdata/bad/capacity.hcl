# 200 sources at 30 fps: more than an L4 carries.
show {
  name       = "capacity"
  size       = "1920x1080"
  frame_rate = "30" # want capacity "Capacity exceeded: sources at 30 fps"
  profile    = "nvidia_l4"
}

source "test_pattern" "p" {
  count = 200
}

scene "s" {
  layer {
    source = source.p[0]
  }
}

bus "program" "pgm" {
  scene = scene.s
}
