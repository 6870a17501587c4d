# An unused source, a bus nobody takes, and (without a Program bus) a scene
# nobody shows.
show {
  name       = "lint-hygiene"
  size       = "1280x720"
  frame_rate = "30"
}

source "test_pattern" "bars" {
  pattern = "bars"
}

source "test_pattern" "spare" {
  pattern = "ramp"
}

scene "bars" {
  layer {
    source = source.bars
  }
}

scene "orphan" {
  layer {
    source = source.bars
    rect   = [0, 0, 640, 360]
  }
}

bus "aux" "mon" {
  scene = scene.bars
}

bus "aux" "idle" {
  source = source.bars
}

output "null" "mon" {
  bus = bus.mon
}
