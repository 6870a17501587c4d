# 180 sources at 30 fps on an L4, which admits 192: under 10 % to spare.
show {
  name       = "lint-headroom"
  size       = "1920x1080"
  frame_rate = "30"
  profile    = "nvidia_l4"
}

source "test_pattern" "tp" {
  count   = 180
  pattern = "bars"
}

scene "full" {
  count = 180
  layer {
    source = source.tp[count.index]
  }
}

bus "program" "pgm" {
  scene = scene.full[0]
}

output "null" "pgm" {
  bus = bus.pgm
}
