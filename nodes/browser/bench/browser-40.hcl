# The seeds' browser measurement (issue 12): 40 browser windows at 1080p30
# into one show, every window a cell of an 8x5 grid on Program, so every
# tick reads every source. Fed by `onair producer -pattern -count 40`
# (memfds, or CUDA buffers with -gpu) on sockets sock/gfx0.sock ...
# sock/gfx39.sock beside this file. run.sh runs it with
# browser_frame_queue 9 (the default: return queue 3) and 3 (return queue 0).
variable "frame_queue" {
  type        = number
  description = "canvas.browser_frame_queue: 9 keeps a return queue of 3, 3 or less none."
  default     = 9
}

variable "sources" {
  type        = number
  description = "How many browser sources (at most 40: the grid's cells)."
  default     = 40
}

locals {
  cell = [for i in range(var.sources) : [(i % 8) * 240, floor(i / 8) * 216, 240, 216]]
}

show {
  name       = "browser-40"
  size       = "1920x1080"
  frame_rate = "30"
  format     = "nv12"
}

canvas {
  browser_frame_queue = var.frame_queue
  import_ttl_ms       = 10000
  source_fan_out      = "event_loop"
  pacing_loops        = 4
}

source "browser" "gfx" {
  count  = var.sources
  socket = "sock/gfx${count.index}.sock"
}

scene "grid" {
  dynamic "layer" {
    for_each = local.cell
    content {
      source = source.gfx[layer.key]
      rect   = layer.value
    }
  }
}

bus "program" "pgm" {
  scene = scene.grid
}
