show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}
canvas {
  tally_tsl5 = ["udp://10.0.0.5:8900", "http://10.0.0.6"]
}
