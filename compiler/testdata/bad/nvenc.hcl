# An NVENC output on a GPU without NVENC.
show {
  name       = "nvenc"
  size       = "1280x720"
  frame_rate = "30"
  profile    = "nvidia_h200" # want capacity "Capacity exceeded: NVENC outputs"
}

source "test_pattern" "bars" {}

bus "aux" "a" {
  source = source.bars
}

output "ffmpeg" "enc" {
  bus  = bus.a
  args = ["-c:v", "h264_nvenc", "-f", "null", "-"]
}
