//go:build race

package live

// raceOn: the race detector keeps shadow memory and metadata for every
// goroutine and lock the test ever made, outside the Go heap and malloc's
// reach, so resident memory grows with reconnects under -race.
const raceOn = true
