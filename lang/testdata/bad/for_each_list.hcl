show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

source "browser" "g" {
  for_each = ["a", "b"]
  socket   = "/tmp/${each.key}.sock"
}
