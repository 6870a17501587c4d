package show

import (
	"testing"

	"github.com/onairhq/onair/frame"
)

// syncRun is what a simulated live source did: frames its synchroniser
// dropped and ticks its pacer repeated (underruns) after the settling
// second, and the least and most time a frame waited from its arrival to
// its release, in ns.
type syncRun struct {
	drops, repeats   int
	minWait, maxWait int64
}

// simulate runs a live source on simulated clocks for secs seconds: a
// sender at speed times the show's rate of 30 fps (1.001: 0.1 % fast),
// each frame arriving up to jitter ns either side of its time (a fixed
// pseudo-random sequence), its synchroniser deciding on each arrival with
// the frames waiting; a pacer taking the oldest waiting frame at every
// tick of the show's clock, or repeating when none waits.
func simulate(speed float64, secs int, jitter int64, phase int64) syncRun {
	const period = int64(1e9) / 30
	fs := NewFrameSync(frame.Rational{Num: 30, Den: 1})
	var q []int64 // arrival times of the frames waiting for the pacer
	run := syncRun{minWait: 1 << 62}
	end := int64(secs) * 1e9
	settle := int64(2e9)
	rnd := uint32(12345)
	nextArrival := func(i int64) int64 {
		rnd = rnd*1664525 + 1013904223
		j := int64(rnd>>8)%(2*jitter+1) - jitter
		return phase + int64(float64(i)*float64(period)/speed) + j
	}
	i, tick := int64(0), int64(0)
	arr := nextArrival(0)
	started := false
	for tick*period < end {
		t := tick * period
		if arr < t { // a frame arrives before the next tick
			if fs.Arrived(len(q) + 1) {
				if arr >= settle {
					run.drops++
				}
			} else {
				q = append(q, arr)
			}
			i++
			arr = max(arr+1, nextArrival(i))
			continue
		}
		switch {
		case len(q) == 0 && started && t >= settle:
			run.repeats++
		case len(q) > 0:
			started = true
			if t >= settle {
				w := t - q[0]
				run.minWait, run.maxWait = min(run.minWait, w), max(run.maxWait, w)
			}
			q = q[1:]
		}
		tick++
	}
	return run
}

// TestFrameSyncKeepsLatencyWithinAFrame: over 60 s of simulated time, a
// sender 0.1 % fast is corrected by about two dropped frames and one 0.1 %
// slow by about two repeats at the pacer (0.1 % of 30 fps is 1.8 frames a
// minute), each with 3 ms of arrival jitter and whatever phase it starts
// at; one on time is not corrected; every frame waits from its arrival to
// its release no more than two frame periods (the Target of one, within a
// frame). Without the synchroniser the fast sender's wait grows by a frame
// every 33 s.
func TestFrameSyncKeepsLatencyWithinAFrame(t *testing.T) {
	const period = int64(1e9) / 30
	for _, c := range []struct {
		name             string
		speed            float64
		minDrop, maxDrop int
		minRep, maxRep   int
	}{
		{"fast", 1.001, 1, 3, 0, 0},
		{"slow", 0.999, 0, 0, 1, 3},
		{"on time", 1, 0, 0, 0, 0},
	} {
		for _, phase := range []int64{0, period / 4, period / 2, 3 * period / 4} {
			r := simulate(c.speed, 60, 3e6, phase)
			if r.drops < c.minDrop || r.drops > c.maxDrop || r.repeats < c.minRep || r.repeats > c.maxRep {
				t.Errorf("%s, phase %d ms: %d drops, %d repeats in a minute; want %d-%d and %d-%d", c.name, phase/1e6, r.drops, r.repeats, c.minDrop, c.maxDrop, c.minRep, c.maxRep)
			}
			if r.maxWait > 2*period || r.minWait < 0 {
				t.Errorf("%s, phase %d ms: frames waited %.1f to %.1f ms, want within %.1f ms", c.name, phase/1e6, float64(r.minWait)/1e6, float64(r.maxWait)/1e6, float64(2*period)/1e6)
			}
			t.Logf("%s, phase %d ms: %d drops, %d repeats, waits %.1f-%.1f ms", c.name, phase/1e6, r.drops, r.repeats, float64(r.minWait)/1e6, float64(r.maxWait)/1e6)
		}
	}
}

// A backlog that stands (a reconnection's, a burst that lasted a whole
// window) is dropped at once after the window, not a frame a second.
func TestFrameSyncDropsAStandingBacklogAtOnce(t *testing.T) {
	fs := &FrameSync{Target: 1, Window: 30}
	drops := 0
	for range 30 {
		if fs.Arrived(4) {
			drops++
		}
	}
	for range 3 {
		if fs.Arrived(4) {
			drops++
		}
	}
	if drops != 3 || fs.Arrived(1) {
		t.Errorf("a wait of 4 for a window: %d frames dropped, want 3, then none", drops)
	}
}
