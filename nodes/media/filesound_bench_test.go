package media

import (
	"testing"
	"time"

	"github.com/onairhq/onair/internal/peer"
)

// BenchmarkFileSoundOnALoop is one CUDA decode loop's share of issue 25's
// show: 52 looping sources of a 2.5 s clip with AAC (75 pictures a pass),
// every round a picture of each, as the loop hands them on, unpaced. It
// reports the loop's time in Frame a picture, the longest one Frame took
// (a picture held: every source on the loop with it) and the pictures
// that went with late sound. -benchtime 300x is four passes.
func BenchmarkFileSoundOnALoop(b *testing.B) {
	peer.NeedFFmpeg(b)
	path, tone := toneClip(b, "aac")
	const sources = 52
	snds := make([]*FileSound, sources)
	for i := range snds {
		snds[i] = NewFileSound(path, tone.Cadence, nil, func(m string) { b.Error(m) })
		snds[i].Open()
		defer snds[i].Close()
	}
	for _, s := range snds { // as the decoders start: once the sound has
		for !s.Started() {
			time.Sleep(time.Millisecond)
		}
	}
	b.ResetTimer()
	var in, longest time.Duration
	for n := range int64(b.N) {
		pass := 0
		if n >= 75 {
			pass = 75
		}
		for _, s := range snds {
			t0 := time.Now()
			s.Frame(n, pass)
			d := time.Since(t0)
			in += d
			longest = max(longest, d)
		}
	}
	b.StopTimer()
	var late uint64
	for _, s := range snds {
		late += s.Late()
	}
	b.ReportMetric(float64(in.Nanoseconds())/float64(b.N*sources), "ns-in-Frame/picture")
	b.ReportMetric(float64(longest.Microseconds())/1e3, "longest-ms")
	b.ReportMetric(float64(late), "late-pictures")
	b.ReportMetric(0, "ns/op")
}
