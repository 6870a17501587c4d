# An HDR source on a show whose colour is HD's: the compositor converts no
# colour, so the source must carry the show's tags.
show {
  name       = "colour"
  size       = "1280x720"
  frame_rate = "30"
  colour {
    range = "limited"
  }
}

source "test_pattern" "hdr" {
  colour { # want formats "A source's colour is not the show's"
    primaries = "bt2020"
    transfer  = "pq"
    matrix    = "bt2020nc"
  }
}

scene "one" {
  layer {
    source = source.hdr
  }
}

bus "program" "pgm" {
  scene = scene.one
}

output "null" "pgm" {
  bus = bus.pgm
}
