show {
  name = "t"
  size = "320x180"
  frame_rate = "25"
}
canvas {
  tally_tsl5 = ["udp://1.2.3.4:5"]
}
