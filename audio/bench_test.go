package audio

import (
	"fmt"
	"math"
	"syscall"
	"testing"
	"time"
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

// BenchmarkMeterLevels is one reading of a meter that has measured a
// minute of programme (its histograms hold 600 blocks each), as /status,
// /metrics and the page read every meter: µs/read, and µs/status for the
// seeds' show's 214 meters.
func BenchmarkMeterLevels(b *testing.B) {
	var m Meter
	sig := programme(2, -1, 60)
	for i := 0; i < len(sig); i += 1600 * Channels {
		m.Add(sig[i:min(i+1600*Channels, len(sig))])
	}
	var l Levels
	for b.Loop() {
		l = m.Levels()
	}
	if math.IsInf(l.Integrated, 0) {
		b.Fatal("no integrated loudness")
	}
	us := float64(b.Elapsed().Nanoseconds()) / 1e3 / float64(b.N)
	b.ReportMetric(us, "µs/read")
	b.ReportMetric(us*214, "µs/status")
}

// BenchmarkShowAudio is the sound of the seeds' show (bench/seeds) for one
// 30 fps tick: 192 sources, each metered; two Program buses whose mixers
// hold every source (the scenes on air show four and one of them), and 20
// AUX buses of one source each; every bus's mix metered and checked for
// clipping (the meter's sample peak, as nodes/show does); once a second
// (every 30th tick) every meter read, as /status and the page's poll read
// them: 214 meters and 404 strips. Every source plays the line-up tone at
// its −18 dBFS (as the test patterns and bench/seeds' clips do; under
// TruePeakFloor but for the blip's tick each second), the tone at −1 dBFS
// (every meter interpolates every sample: the worst case), or speech-like
// programme peaking at −1 dBFS (see programme). %core@30fps is the issue's
// budget's measure (≤ 10 % of one core), from the process's CPU time, so
// that other work on a loaded machine does not count (it still slows the
// caches, and a core's other hyperthread slows it); %core-best is the
// quickest second of sound (30 ticks) in wall time, which a busy shared
// machine disturbs least; µs/tick is wall time.
func BenchmarkShowAudio(b *testing.B) {
	cad := Cadence{30, 1}
	for _, level := range []float64{ToneDBFS, -1} {
		tone, err := NewTone(ToneHz, level, cad)
		if err != nil {
			b.Fatal(err)
		}
		var second [][]float32
		for k := range int64(30) {
			second = append(second, tone.Block(nil, k))
		}
		b.Run(fmt.Sprintf("tone=%gdBFS", level), func(b *testing.B) { benchShowAudio(b, second) })
	}
	var second [][]float32
	sig := programme(1, -1, 1)
	for k := range int64(30) {
		second = append(second, sig[cad.Start(k)*Channels:(cad.Start(k)+int64(cad.Samples(k)))*Channels])
	}
	b.Run("programme=-1dBFS", func(b *testing.B) { benchShowAudio(b, second) })
}

// benchShowAudio runs the show with every source playing second, a
// second's blocks (tick k plays second[k%30]): the benchmark is the meters
// and mixers, not making the sound.
func benchShowAudio(b *testing.B, second [][]float32) {
	const sources, aux = 192, 20
	s := showAudio{cad: Cadence{30, 1}, meters: make([]Meter, sources), second: second}
	names := make([]string, sources)
	for i := range names {
		names[i] = fmt.Sprint("s", i)
	}
	for _, visible := range []int{4, 1} { // Program a (a quad split), Program b (one source)
		bs := &benchBus{mixer: NewMixer(names), inputs: make([]int, sources), weights: make([]float64, sources)}
		for i := range bs.inputs {
			bs.inputs[i] = i
		}
		for i := range visible {
			bs.weights[i] = 1
		}
		s.buses = append(s.buses, bs)
	}
	for i := range aux {
		s.buses = append(s.buses, &benchBus{mixer: NewMixer(names[i*9 : i*9+1]), inputs: []int{i * 9}, weights: []float64{1}})
	}
	for k := int64(0); k < 100; k++ { // 3.3 s of sound first: every queue, scratch and histogram made
		s.tick(k)
	}
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	best := time.Duration(1<<63 - 1)
	b.ResetTimer()
	mark := time.Now()
	for k := int64(100); k < int64(b.N)+100; k++ {
		s.tick(k)
		if k%30 == 29 {
			if k >= 129 { // a whole second since the last
				best = min(best, time.Since(mark))
			}
			mark = time.Now()
		}
	}
	b.StopTimer()
	cpu := (cpuTime(b) - cpu0).Seconds() / float64(b.N)
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/tick")
	b.ReportMetric(cpu*30*100, "%core@30fps")
	if best < time.Duration(1<<63-1) {
		b.ReportMetric(best.Seconds()*100, "%core-best")
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type showAudio struct {
	cad    Cadence
	second [][]float32 // each tick's block of the tone, a second of them
	meters []Meter
	buses  []*benchBus
	read   Levels // the last meter read
	clips  int    // ticks a bus's mix reached full scale (Program a's four sources' blips sum past it)
}

type benchBus struct {
	mixer   *Mixer
	inputs  []int // the show's source of each mixer input (all make the same sound)
	weights []float64
	meter   Meter
}

// tick is one tick of BenchmarkShowAudio: every source's block metered,
// then every bus's pushed, mixed, metered and checked for clipping; every
// 30th tick, every meter read.
func (s *showAudio) tick(k int64) {
	block := s.second[k%30]
	for i := range s.meters {
		s.meters[i].Add(block)
	}
	for _, bs := range s.buses {
		for in := range bs.inputs {
			bs.mixer.Push(in, block)
		}
		if bs.meter.Add(bs.mixer.Mix(s.cad.Samples(k), bs.weights)) >= 1 {
			s.clips++
		}
	}
	if k%30 == 29 {
		for i := range s.meters {
			s.read = s.meters[i].Levels()
		}
		for _, bs := range s.buses {
			s.read = bs.meter.Levels()
		}
	}
}
