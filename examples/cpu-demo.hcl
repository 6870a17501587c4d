# The demo `make run` plays on the CPU backend: four small sources, a 2x2
# grid and a full-frame scene on Program, one AUX bus, both recorded as Y4M
# under out/. `make run` generates the raw clips with `onair media` first.

show {
  name       = "cpu-demo"
  size       = "640x360"
  frame_rate = "30"
  format     = "nv12"
}

canvas {
  pacing_loops  = 2
  input_poll_ms = 8
}

source "test_pattern" "bars" {
  pattern = "bars"
  size    = "640x360"
}

source "test_pattern" "checker" {
  pattern = "checker"
  size    = "320x180"
}

source "raw_file" "clip" {
  count  = 2
  path   = "media/clip${count.index}.nv12"
  format = "nv12"
  size   = "640x360"
  loop   = true
}

scene "grid" {
  dynamic "layer" {
    for_each = [source.bars, source.checker, source.clip[0], source.clip[1]]
    content {
      source = layer.value
      rect   = [(layer.key % 2) * 320, floor(layer.key / 2) * 180, 320, 180]
      fit    = "contain"
    }
  }
}

scene "clip" {
  layer {
    source = source.clip[0]
  }
  layer {
    source  = source.checker
    rect    = [440, 20, 180, 100]
    fit     = "cover"
    opacity = 0.8
  }
}

bus "program" "pgm" {
  scene = scene.grid
}

bus "aux" "mon" {
  source = source.clip[1]
}

output "record" "pgm" {
  bus  = bus.pgm
  path = "../out/pgm.y4m"
}

output "record" "mon" {
  bus  = bus.mon
  path = "../out/mon.y4m"
}
