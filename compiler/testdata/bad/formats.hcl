# A 10-bit raw source in an 8-bit show: the formats check stops it.
show {
  name       = "formats"
  size       = "1920x1080"
  frame_rate = "30"
  format     = "nv12"
}

source "raw_file" "hdr" {
  path   = "hdr.p010"
  format = "p010" # want formats "Formats disagree along an edge"
  size   = "1920x1080"
}

scene "s" {
  layer {
    source = source.hdr
  }
}

bus "program" "pgm" {
  scene = scene.s
}
