source "test_pattern" "bars" {}
scene "s" {
  layer { source = source.bars }
}
bus "program" "a" { scene = scene.s }
output "null" "n" { bus = bus.a }
