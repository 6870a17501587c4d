show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

source "browser" "g" {
  for_each = { left = "/run/l.sock", right = "/run/r.sock" }
  socket   = each.value
}
bus "aux" "a" {
  source = source.g["lefft"]
}
