source "test_pattern" "a" {}
