# A million instances.
show {
  name       = "hostile"
  size       = "1920x1080"
  frame_rate = "30"
}
source "test_pattern" "cam" {
  for_each = toset(flatten([for i in range(1000) : [for j in range(1000) : "${i}-${j}"]]))
  pattern  = "bars"
}
