show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}
tally "tsl5" "desk" {
  address = "10.0.0.5:8900"
  port    = 8900
}
tally "tsl5" "wall" {
  address   = "10.0.0.6"
  port      = 70000
  transport = "http"
}
tally "tsl4" "old" {
  address = "10.0.0.7"
  port    = 8900
}
tally "tsl5" "nowhere" {
  port = 8900
}
