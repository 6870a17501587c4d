# A 10,000-digit string read as a number.
show {
  name       = "hostile"
  size       = "1920x1080"
  frame_rate = "30"
}
locals {
  digits = join("", [for i in range(1000) : "7777777777"])
  number = tonumber(local.digits)
}
