# A %{for} writing a 10 KB string a thousand times.
show {
  name       = "hostile"
  size       = "1920x1080"
  frame_rate = "30"
}
locals {
  kb   = join("", [for i in range(1000) : "xxxxxxxxxx"])
  many = "%{for i in range(1000)}${local.kb}%{endfor}"
}
