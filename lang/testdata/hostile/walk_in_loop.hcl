# A large list handed to a function a thousand times: cty walks it at each call.
show {
  name       = "hostile"
  size       = "1920x1080"
  frame_rate = "30"
}
locals {
  big   = setproduct(range(250), range(250))
  sizes = [for i in range(1000) : length(local.big)]
}
