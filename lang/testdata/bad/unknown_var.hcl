show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

variable "clips" {
  default = ["a"]
}
source "hevc_file" "a" {
  path = var.clip[0]
}
