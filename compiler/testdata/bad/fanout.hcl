# One camera on 70 AUX buses: its fan-out would feed more consumers than
# the kind allows.
show {
  name       = "fanout"
  size       = "1280x720"
  frame_rate = "25"
}

source "test_pattern" "cam" { # want input-routing "Fan-out wider than allowed"
  pattern = "bars"
}

bus "aux" "mon" {
  count  = 70
  source = source.cam
}
