# compile with backend cpu: HEVC needs NVDEC.
show {
  name       = "cpu"
  size       = "1280x720"
  frame_rate = "30"
}

source "hevc_file" "cam" { # want - "Source needs a GPU"
  path = "cam.hevc"
}
