show {
  name       = "outside"
  size       = "320x180"
  frame_rate = "25"
}
source "test_pattern" "bars" {}
scene "one" {
  layer { source = source.bars }
}
bus "program" "pgm" { scene = scene.one }
output "file" "up" {
  bus  = bus.pgm
  path = "../elsewhere/pgm.mp4"
}
output "file" "abs" {
  bus  = bus.pgm
  path = "/tmp/pgm.mkv"
}
output "hls" "web" {
  bus = bus.pgm
  dir = "hls/../../web"
}
output "file" "ok" {
  bus  = bus.pgm
  path = "rec/../pgm.ts"
}
output "file" "meant" {
  bus           = bus.pgm
  path          = "../archive/pgm.mp4"
  allow_outside = true
}
