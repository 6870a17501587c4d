# Program recorded to a fragmented MP4 (never truncated, even if onair is
# killed) and streamed over SRT, with the encoding declared once per output.
# Watch the stream: ffplay 'srt://127.0.0.1:9000?mode=listener' (the output
# calls it, and tries again with backoff until it answers).

show {
  name       = "delivery"
  size       = "1280x720"
  frame_rate = "30"
}

source "test_pattern" "bars" {
  pattern = "bars"
}

scene "bars" {
  layer {
    source = source.bars
  }
}

bus "program" "pgm" {
  scene = scene.bars
}

output "file" "pgm_rec" {
  bus     = bus.pgm
  path    = "out/pgm.mp4"
  segment = "1h"
  video {
    codec   = "h264"
    bitrate = "8M"
    preset  = "veryfast"
  }
}

output "stream" "pgm_srt" {
  bus = bus.pgm
  url = "srt://127.0.0.1:9000"
  video {
    codec   = "h264"
    bitrate = "4M"
    gop     = 30
  }
}

output "hls" "pgm_web" {
  bus     = bus.pgm
  dir     = "out/hls"
  segment = "2s"
  serve   = true
}
