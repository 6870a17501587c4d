show {
  name       = "bad"
  size       = "320x180"
  frame_rate = "25"
}
source "test_pattern" "bars" {}
scene "one" {
  layer { source = source.bars }
}
bus "program" "pgm" { scene = scene.one }
output "file" "rec" {
  bus     = bus.pgm
  path    = "out/pgm.avi"
  segment = "90 minutes"
  video { bitrate = "10T" }
}
output "stream" "web" {
  bus = bus.pgm
  url = "http://127.0.0.1:9000"
  video {
    codec = "vp9"
    gop   = 0
  }
  video {}
}
output "hls" "h" {
  bus = bus.pgm
  dir = "hls"
  audio { bitrate = "0" }
}
output "stream" "rt" {
  bus = bus.pgm
  url = "rtmp://live.example/app/key"
  video { codec = "hevc" }
}
