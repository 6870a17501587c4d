//go:build !race

package cpu

import ()

// raceDetector is true under go test -race (see race_on_test.go).
const raceDetector = false
