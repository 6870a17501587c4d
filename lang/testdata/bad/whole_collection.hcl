show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

source "test_pattern" "cam" {
  count = 2
}
bus "aux" "mon" {
  source = source.cam
}
