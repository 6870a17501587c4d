# At 60 fps a compositor that looks every 100 ms needs more than three
# frames of queue.
show {
  name       = "queue"
  size       = "1280x720"
  frame_rate = "60"
}

canvas {
  input_poll_ms = 100 # want queue-sizing "A source queue is too short for the poll interval"
}

source "test_pattern" "bars" {}

scene "s" {
  layer {
    source = source.bars
  }
}

bus "program" "pgm" {
  scene = scene.s
}
