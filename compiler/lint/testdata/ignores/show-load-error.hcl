# show-load's errors cannot be ignored, whatever the reason says: only its
# warnings can. Nothing but the language ran, so the ignore above the scene
# is not reported as matching nothing.
show {
  name       = "lint-ignore-load-error"
  size       = "1280x720"
  frame_rate = "30"
}

source "test_pattern" "bars" {
  pattern = "bars"
}

# onair-lint-ignore show-load: the second one wins anyway
source "test_pattern" "bars" {
  pattern = "checker"
}

# onair-lint-ignore unused-scene: kept for later
scene "bars" {
  layer {
    source = source.bars
  }
}

bus "program" "a" {
  scene = scene.bars
}

output "record" "a" {
  bus  = bus.a
  path = "out/pgm.y4m"
}
