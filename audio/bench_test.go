package audio

import (
	"fmt"
	"testing"
)

// BenchmarkBusTick is one bus's sound for one 30 fps tick: sources' blocks
// pushed, mixed (half of them following video, on air) and the mix
// metered. µs/tick is what a bus costs a tick; %core@30fps what it costs
// of one core, for the budget (192 sources, 22 buses, 10 % of a
// core).
func BenchmarkBusTick(b *testing.B) {
	for _, sources := range []int{1, 16} {
		b.Run(fmt.Sprintf("sources=%d", sources), func(b *testing.B) {
			cad := Cadence{30, 1}
			tone, _ := NewTone(ToneHz, ToneDBFS, cad)
			names := make([]string, sources)
			weights := make([]float64, sources)
			for i := range names {
				names[i] = fmt.Sprint("s", i)
				weights[i] = float64(i % 2)
			}
			m := NewMixer(names)
			var meter Meter
			block := tone.Block(nil, 1)
			b.ResetTimer()
			for k := 0; k < b.N; k++ {
				for i := range names {
					m.Push(i, block)
				}
				meter.Add(m.Mix(cad.Samples(int64(k)), weights))
			}
			us := float64(b.Elapsed().Microseconds()) / float64(b.N)
			b.ReportMetric(us, "µs/tick")
			b.ReportMetric(us*30/1e4, "%core@30fps")
		})
	}
}

// BenchmarkSourceMeter is metering one source's block of a 30 fps frame,
// as every source with sound does.
func BenchmarkSourceMeter(b *testing.B) {
	cad := Cadence{30, 1}
	tone, _ := NewTone(ToneHz, ToneDBFS, cad)
	block := tone.Block(nil, 1)
	var meter Meter
	for b.Loop() {
		meter.Add(block)
	}
	us := float64(b.Elapsed().Microseconds()) / float64(b.N)
	b.ReportMetric(us, "µs/frame")
	b.ReportMetric(us*30/1e4, "%core@30fps")
}
