# compile with backend cpu: a browser source hands over GPU buffers.
show {
  name       = "cpu"
  size       = "1280x720"
  frame_rate = "30"
}

source "browser" "gfx" { # want - "Source cannot run on this backend"
  socket = "/run/onair/gfx.sock"
}
