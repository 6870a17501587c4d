show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

source "test_pattern" "cam" {}
scene "s" {
  layer {
    source = source.cam
  }
}
bus "aux" "mon" {
  source = source.cam
  routes = [scene.s, scene.s]
}
bus "aux" "mon2" {
  scene  = scene.s
  routes = ["scene.s"]
}
bus "aux" "mon3" {
  scene  = scene.s
  routes = [bus.mon]
}
