show {
  name       = "profile"
  size       = "1280x720"
  frame_rate = "30"
  profile    = "nvidia_l5" # want - "Unknown capacity profile"
}

source "test_pattern" "bars" {}
