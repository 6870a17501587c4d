//go:build race

package cpu

import ()

// raceDetector is true under go test -race, which slows the compositor
// several times over: tests then check that shows keep drawing, not that
// they keep their deadlines.
const raceDetector = true
