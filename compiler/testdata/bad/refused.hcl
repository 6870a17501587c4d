# compiled for a backend whose lowering refuses browser sources (the
# tests' "refusing" target): the source is refused with the reason.
show {
  name       = "refused"
  size       = "1280x720"
  frame_rate = "30"
}

source "browser" "gfx" { # want - "Source cannot run on this backend"
  socket = "/run/onair/gfx.sock"
}
