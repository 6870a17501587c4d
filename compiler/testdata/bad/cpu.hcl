# compile with backend cpu: HEVC needs NVDEC.
show {
  name       = "cpu"
  size       = "1280x720"
  frame_rate = "30"
}

source "hevc_file" "cam" { # want - "Source cannot run on this backend"
  path = "cam.hevc"
}
