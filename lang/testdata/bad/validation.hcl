show {
  name       = "t"
  size       = "1920x1080"
  frame_rate = "30"
}

variable "n" {
  type    = number
  default = 300
  validation {
    condition     = var.n <= 192
    error_message = "At most 192 sources fit on one L4."
  }
}
