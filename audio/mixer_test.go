package audio

import (
	"math"
	"testing"
)

// goertzel is the power of one channel of b at hz.
func goertzel(b []float32, hz float64) float64 {
	w := 2 * math.Pi * hz / Rate
	c := 2 * math.Cos(w)
	var s1, s2 float64
	n := len(b) / Channels
	for i := 0; i < n; i++ {
		s := float64(b[i*Channels]) + c*s1 - s2
		s2, s1 = s1, s
	}
	return (s1*s1 + s2*s2 - c*s1*s2) / float64(n*n)
}

// toneSource is a steady sine (no blips) as a source's blocks per frame.
func toneSource(hz, dbfs float64, cad Cadence, n int64) []float32 {
	a := DBToGain(dbfs)
	s0, count := cad.Start(n), cad.Samples(n)
	b := make([]float32, count*Channels)
	for i := range count {
		v := float32(a * math.Sin(2*math.Pi*hz*float64(s0+int64(i))/Rate))
		b[2*i], b[2*i+1] = v, v
	}
	return b
}

// Cutting between two sources with different tones: the spectrum changes
// on the cut's tick, and no sample steps further than the two tones' own
// steps and the 5 ms ramp allow (a hard switch would step by up to both
// amplitudes at once).
func TestFollowVideoCut(t *testing.T) {
	cad := Cadence{30, 1}
	m := NewMixer([]string{"a", "b"})
	const cutTick = 10
	var out []float32
	var blocks [][]float32
	for k := int64(0); k < 20; k++ {
		m.Push(0, toneSource(1000, -12, cad, k))
		m.Push(1, toneSource(3000, -12, cad, k))
		w := []float64{1, 0}
		if k >= cutTick {
			w = []float64{0, 1}
		}
		b := m.Mix(cad.Samples(k), w)
		blocks = append(blocks, append([]float32(nil), b...))
		out = append(out, b...)
	}
	for k, b := range blocks {
		p1, p3 := goertzel(b, 1000), goertzel(b, 3000)
		onA := k < cutTick
		if onA != (p1 > 100*p3) || !onA != (p3 > 100*p1) {
			t.Errorf("tick %d: power at 1 kHz %.3g, at 3 kHz %.3g; the cut is on tick %d", k, p1, p3, cutTick)
		}
	}
	a := DBToGain(-12)
	toneStep := func(hz float64) float64 { return a * 2 * math.Sin(math.Pi*hz/Rate) }
	bound := toneStep(3000) + 2*a/RampSamples + 1e-6
	var worst float64
	for i := Channels; i < len(out); i += Channels {
		worst = math.Max(worst, math.Abs(float64(out[i]-out[i-Channels])))
	}
	if worst > bound {
		t.Errorf("largest step between samples %.4f, more than the ramp allows (%.4f)", worst, bound)
	}
	t.Logf("largest step %.4f (bound %.4f; a hard switch could step %.4f)", worst, bound, 2*a)
	if m.Stats[0].Short != 0 || m.Stats[1].Short != 0 {
		t.Errorf("sources ran short: %+v", m.Stats)
	}
}

// During a fade the follow-video gain at each tick's end is the
// transition's progress, the curve the picture uses.
func TestFollowVideoFadeFollowsProgress(t *testing.T) {
	cad := Cadence{25, 1}
	m := NewMixer([]string{"a"})
	dc := make([]float32, cad.Samples(0)*Channels)
	for i := range dc {
		dc[i] = 0.5
	}
	for k := int64(0); k < 12; k++ {
		w := 1 - float64(k)/10 // a ten-tick fade out
		m.Push(0, dc)
		b := m.Mix(cad.Samples(k), []float64{w})
		got := float64(b[len(b)-1]) / 0.5
		if math.Abs(got-math.Max(0, w)) > 1e-6 {
			t.Errorf("tick %d: gain %.6f, the picture's weight %.6f", k, got, math.Max(0, w))
		}
	}
}

// Modes, faders, pan, master and mix-minus, each on its own.
func TestMixerStripsAndMixMinus(t *testing.T) {
	cad := Cadence{30, 1}
	dc := func(v float32) []float32 {
		b := make([]float32, cad.Samples(0)*Channels)
		for i := range b {
			b[i] = v
		}
		return b
	}
	for _, c := range []struct {
		name   string
		strips []Strip
		master float64
		minus  string
		w      []float64
		l, r   float64
	}{
		{"follow, visible", []Strip{{}, {}}, 0, "", []float64{1, 0}, 0.1, 0.1},
		{"follow, both", []Strip{{}, {}}, 0, "", []float64{1, 1}, 0.3, 0.3},
		{"always", []Strip{{}, {Mode: Always}}, 0, "", []float64{0, 0}, 0.2, 0.2},
		{"off", []Strip{{Mode: Off}, {Mode: Off}}, 0, "", []float64{1, 1}, 0, 0},
		{"mute", []Strip{{Mute: true}, {}}, 0, "", []float64{1, 1}, 0.2, 0.2},
		{"fader -6 dB", []Strip{{GainDB: -6.0206}, {Mode: Off}}, 0, "", []float64{1, 1}, 0.05, 0.05},
		{"fader at the bottom", []Strip{{GainDB: MinDB}, {Mode: Off}}, 0, "", []float64{1, 1}, 0, 0},
		{"pan left", []Strip{{Pan: -1}, {Mode: Off}}, 0, "", []float64{1, 1}, 0.1, 0},
		{"pan half right", []Strip{{Pan: 0.5}, {Mode: Off}}, 0, "", []float64{1, 1}, 0.05, 0.1},
		{"master -6 dB", []Strip{{}, {}}, -6.0206, "", []float64{1, 1}, 0.15, 0.15},
		{"mix-minus b", []Strip{{Mode: Always}, {Mode: Always}}, 0, "b", nil, 0.1, 0.1},
	} {
		m := NewMixer([]string{"a", "b"})
		for i, s := range c.strips {
			if err := m.SetStrip(i, s); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.SetMaster(c.master); err != nil {
			t.Fatal(err)
		}
		if err := m.SetMixMinus(c.minus); err != nil {
			t.Fatal(err)
		}
		m.Push(0, dc(0.1))
		m.Push(1, dc(0.2))
		b := m.Mix(cad.Samples(0), c.w)
		// Past the queue's slack, every sample frame is the mix.
		l, r := float64(b[len(b)-2]), float64(b[len(b)-1])
		if math.Abs(l-c.l) > 1e-4 || math.Abs(r-c.r) > 1e-4 {
			t.Errorf("%s: left %.5f right %.5f, want %.5f %.5f", c.name, l, r, c.l, c.r)
		}
	}
}

// A source whose frames run at the show's rate but from another tick (its
// cadence out of step with the bus's at 30000/1001) is never short and
// plays every sample, in order, Slack behind.
func TestSourceCadenceOutOfStep(t *testing.T) {
	cad := Cadence{30000, 1001}
	m := NewMixer([]string{"a"})
	const offset = 3 // the source's frame n is on the bus's tick n-3
	var out []float32
	for k := int64(0); k < 300; k++ {
		m.Push(0, toneSource(440, -6, cad, k+offset))
		out = append(out, m.Mix(cad.Samples(k), []float64{1})...)
	}
	if m.Stats[0].Short != 0 || m.Stats[0].Dropped != 0 {
		t.Fatalf("the source's audio was short or dropped: %+v", m.Stats[0])
	}
	a := DBToGain(-6)
	first := cad.Start(offset) - Slack
	for i := Slack; i < len(out)/Channels; i++ {
		want := a * math.Sin(2*math.Pi*440*float64(first+int64(i))/Rate)
		if math.Abs(float64(out[i*Channels])-want) > 1e-6 {
			t.Fatalf("sample %d: %.6f, want %.6f (a gap or a repeat)", i, out[i*Channels], want)
		}
	}
}

func TestMixerRefusesBadValues(t *testing.T) {
	m := NewMixer([]string{"a", "b"})
	for _, s := range []Strip{{GainDB: 200}, {GainDB: math.NaN()}, {GainDB: -200}, {Pan: 2}, {Pan: math.NaN()}, {Mode: 7}} {
		if err := m.SetStrip(0, s); err == nil {
			t.Errorf("strip %+v was taken", s)
		}
	}
	if err := m.SetStrip(5, Strip{}); err == nil {
		t.Error("a strip for source 5 of 2 was taken")
	}
	if err := m.SetMaster(math.Inf(1)); err == nil {
		t.Error("a master at +Inf dB was taken")
	}
	if err := m.SetMixMinus("c"); err == nil {
		t.Error("a mix-minus of a source not on the bus was taken")
	}
	if _, err := ParseMode("loud"); err == nil {
		t.Error(`mode "loud" was taken`)
	}
	for _, s := range []string{"follow", "always", "off"} {
		if md, err := ParseMode(s); err != nil || md.String() != s {
			t.Errorf("ParseMode(%q) = %v, %v", s, md, err)
		}
	}
}

// A tick a source sends nothing for (its frame repeated on the bus) is
// short, once: the queue starts again at its slack, and the ticks after it
// are whole.
func TestShortTickRecovers(t *testing.T) {
	cad := Cadence{30000, 1001}
	m := NewMixer([]string{"a"})
	for k := int64(0); k < 20; k++ {
		if k != 7 {
			m.Push(0, toneSource(440, -6, cad, k+1))
		}
		m.Mix(cad.Samples(k), []float64{1})
	}
	if m.Stats[0].Short != 1 {
		t.Errorf("%d short ticks, want the one with no frame", m.Stats[0].Short)
	}
}

// A strip's delay holds its source back by exactly that many samples (and
// the slack), a lip-sync trim; taking it away again drops what it held.
func TestStripDelay(t *testing.T) {
	cad := Cadence{30, 1}
	m := NewMixer([]string{"a"})
	if err := m.SetStrip(0, Strip{DelayMs: 10}); err != nil {
		t.Fatal(err)
	}
	var out []float32
	for k := int64(0); k < 10; k++ {
		m.Push(0, toneSource(440, -6, cad, k))
		out = append(out, m.Mix(cad.Samples(k), []float64{1})...)
	}
	lag := Slack + 10*Rate/1000
	a := DBToGain(-6)
	for i := 0; i < len(out)/2; i++ {
		want := 0.0
		if i >= lag {
			want = a * math.Sin(2*math.Pi*440*float64(i-lag)/Rate)
		}
		if math.Abs(float64(out[2*i])-want) > 1e-5 {
			t.Fatalf("sample %d: %.6f, want %.6f (the tone %d samples late)", i, out[2*i], want, lag)
		}
	}
	if m.Stats[0].Short != 0 {
		t.Errorf("a delayed source ran short: %+v", m.Stats[0])
	}
	if err := m.SetStrip(0, Strip{DelayMs: 2000}); err == nil {
		t.Error("a delay of 2 s was taken")
	}
	if err := m.SetStrip(0, Strip{}); err != nil {
		t.Fatal(err)
	}
	m.Push(0, toneSource(440, -6, cad, 10))
	m.Mix(cad.Samples(10), []float64{1})
	if m.Stats[0].Short != 0 {
		t.Errorf("after the delay went: %+v", m.Stats[0])
	}
}

// A source not heard for a while (a follow-video source off air, the most
// of a Program bus's strips) is heard again in step, sample for sample, as
// on a bus where it was heard all along: its queue kept exactly what it
// would have held, through a delay and a tick where it ran ahead.
func TestSourceHeardAgainInStep(t *testing.T) {
	cad := Cadence{30000, 1001}
	heard, muted := NewMixer([]string{"a"}), NewMixer([]string{"a"})
	for _, m := range []*Mixer{heard, muted} {
		if err := m.SetStrip(0, Strip{DelayMs: 7}); err != nil {
			t.Fatal(err)
		}
	}
	for k := int64(0); k < 40; k++ {
		var blocks [][]float32
		switch {
		case k == 20: // the source ran ahead: seven ticks' blocks at once, more than the queue keeps
			for j := range int64(7) {
				blocks = append(blocks, toneSource(440, -6, cad, k+j))
			}
		case k < 20 || k > 26:
			blocks = append(blocks, toneSource(440, -6, cad, k))
		}
		w := 0.0
		if k < 10 || k >= 30 {
			w = 1
		}
		for _, b := range blocks {
			heard.Push(0, b)
			muted.Push(0, b)
		}
		want := heard.Mix(cad.Samples(k), []float64{1})
		got := muted.Mix(cad.Samples(k), []float64{w})
		if k >= 31 { // a tick after the ramp up
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("tick %d, sample %d: %v, heard all along %v", k, i/Channels, got[i], want[i])
				}
			}
		}
	}
	if heard.Stats[0].Dropped == 0 {
		t.Errorf("the source ran ahead and nothing was dropped: %+v", heard.Stats[0])
	}
	if heard.Stats[0] != muted.Stats[0] {
		t.Errorf("stats %+v, heard all along %+v", muted.Stats[0], heard.Stats[0])
	}
}
