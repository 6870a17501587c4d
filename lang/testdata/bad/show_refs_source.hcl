show {
  name       = source.a.name
  size       = "1920x1080"
  frame_rate = "30"
}
source "test_pattern" "a" {}
