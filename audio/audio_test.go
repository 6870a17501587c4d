package audio

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onairhq/onair/internal/peer"
)

func TestCadenceIsExact(t *testing.T) {
	for _, c := range []struct {
		num, den int64
		want     []int // one period of the cadence from tick 0
	}{
		{30, 1, []int{1600}},
		{25, 1, []int{1920}},
		{50, 1, []int{960}},
		{60, 1, []int{800}},
		{30000, 1001, []int{1602, 1601, 1602, 1601, 1602}},
		{60000, 1001, []int{801, 801, 800, 801, 801, 801, 801, 800, 801, 801}},
	} {
		cad, err := NewCadence(c.num, c.den)
		if err != nil {
			t.Fatal(err)
		}
		period := int64(len(c.want))
		// A day of ticks: every tick's count matches the period's, and the
		// running total is the exact rational sample count.
		ticks := 86400 * c.num / c.den
		var total int64
		for k := int64(0); k < ticks; k++ {
			n := cad.Samples(k)
			if n != c.want[k%period] {
				t.Fatalf("%d/%d tick %d: %d samples, want %d", c.num, c.den, k, n, c.want[k%period])
			}
			total += int64(n)
			if k%period == period-1 {
				if exact := (k + 1) * Rate * c.den / c.num; total != exact || (k+1)*Rate*c.den%c.num != 0 {
					t.Fatalf("%d/%d after %d ticks: %d samples, want %d", c.num, c.den, k+1, total, exact)
				}
			}
		}
		for _, s := range []int64{0, 1, 1599, 1600, 1602, 8007, 8008, 123456789} {
			k := cad.Tick(s)
			if !(cad.Start(k) <= s && s < cad.Start(k+1)) {
				t.Errorf("%d/%d: Tick(%d) = %d, which covers %d..%d", c.num, c.den, s, k, cad.Start(k), cad.Start(k+1))
			}
		}
		if m := cad.MaxSamples(); m < slicesMax(c.want) {
			t.Errorf("%d/%d: MaxSamples %d < %d", c.num, c.den, m, slicesMax(c.want))
		}
	}
	if _, err := NewCadence(0, 1); err == nil {
		t.Error("a frame rate of 0/1 was taken")
	}
}

func slicesMax(v []int) int {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// sine appends secs seconds of a stereo sine at dbfs (peak) to b.
func sine(b []float32, hz, dbfs, secs, phase float64) []float32 {
	a := DBToGain(dbfs)
	n := int(math.Round(secs * Rate))
	for i := 0; i < n; i++ {
		v := float32(a * math.Sin(2*math.Pi*hz*float64(i)/Rate+phase))
		b = append(b, v, v)
	}
	return b
}

func measure(signal []float32) Levels {
	var m Meter
	for i := 0; i < len(signal); i += 1600 * Channels { // in ticks, as a bus feeds it
		m.Add(signal[i:min(i+1600*Channels, len(signal))])
	}
	return m.Levels()
}

// ffmpegR128 runs ffmpeg's ebur128 filter over the signal (written as our
// WAV) and returns its last integrated loudness, loudness range and true
// peak (dBTP).
func ffmpegR128(t *testing.T, signal []float32) (i, lra, tp float64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.wav")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWAVWriter(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(signal); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-i", path,
		"-af", "ebur128=peak=true:metadata=1,ametadata=print:file=-", "-f", "null", "-").CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	vals := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "lavfi.r128."), "=")
		if x, err := strconv.ParseFloat(v, 64); ok && err == nil {
			vals[k] = x
		}
	}
	for _, k := range []string{"I", "LRA", "true_peak"} {
		if _, ok := vals[k]; !ok {
			t.Fatalf("ffmpeg printed no %s:\n%s", k, out)
		}
	}
	return vals["I"], vals["LRA"], 20 * math.Log10(vals["true_peak"])
}

// EBU Tech 3341's minimum-requirement signals (stereo 1 kHz sines at
// these levels and durations) and the integrated loudness each must read,
// ±0.1 LU; and ffmpeg's ebur128 filter on the same samples within 0.1 LU.
func TestLoudnessAgainstTech3341AndFFmpeg(t *testing.T) {
	peer.NeedFFmpeg(t)
	type seg struct{ dbfs, secs float64 }
	for _, c := range []struct {
		name string
		segs []seg
		want float64 // integrated, LUFS
	}{
		{"case1", []seg{{-23, 20}}, -23},
		{"case2", []seg{{-33, 20}}, -33},
		{"case3", []seg{{-36, 10}, {-23, 60}, {-36, 10}}, -23},
		{"case4", []seg{{-72, 10}, {-36, 10}, {-23, 60}, {-36, 10}, {-72, 10}}, -23},
		{"case5", []seg{{-26, 20}, {-20, 20.1}, {-26, 20}}, -23},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sig []float32
			for _, s := range c.segs {
				sig = sine(sig, 1000, s.dbfs, s.secs, 0)
			}
			got := measure(sig)
			if math.Abs(got.Integrated-c.want) > 0.1 {
				t.Errorf("integrated %.3f LUFS, want %.1f ±0.1", got.Integrated, c.want)
			}
			fi, flra, _ := ffmpegR128(t, sig)
			if math.Abs(got.Integrated-fi) > 0.1 {
				t.Errorf("integrated %.3f LUFS, ffmpeg's ebur128 %.3f", got.Integrated, fi)
			}
			if math.Abs(got.Range-flra) > 0.2 {
				t.Errorf("loudness range %.3f LU, ffmpeg's ebur128 %.3f", got.Range, flra)
			}
			t.Logf("integrated %.3f (ffmpeg %.3f), range %.2f (ffmpeg %.2f)", got.Integrated, fi, got.Range, flra)
		})
	}
}

// Momentary and short-term of a steady tone read its loudness once their
// windows are full (Tech 3341 cases 1-2 read M and S at -23 and -33).
func TestMomentaryAndShortTerm(t *testing.T) {
	var m Meter
	if l := m.Levels(); !math.IsInf(l.Momentary, -1) || !math.IsInf(l.Integrated, -1) {
		t.Errorf("an empty meter reads %+v", l)
	}
	sig := sine(nil, 1000, -23, 0.3, 0)
	m.Add(sig)
	if l := m.Levels(); !math.IsInf(l.Momentary, -1) {
		t.Errorf("300 ms in, momentary is %v: its window is 400 ms", l.Momentary)
	}
	for _, lvl := range []float64{-23, -33} {
		m = Meter{}
		m.Add(sine(nil, 1000, lvl, 3.2, 0))
		l := m.Levels()
		if math.Abs(l.Momentary-lvl) > 0.1 || math.Abs(l.ShortTerm-lvl) > 0.1 {
			t.Errorf("%v dBFS: momentary %.3f, short-term %.3f", lvl, l.Momentary, l.ShortTerm)
		}
	}
}

// A sine at a quarter of the sample rate, sampled 45° off its peaks, has
// its sample peak 3 dB under its true peak; the oversampled meter reads
// the true one within Tech 3341's true-peak tolerance (+0.2/−0.4 dB; read
// once the tone is steady, as the onset's step has true overshoot). A
// 997 Hz sine reads its level, as ffmpeg's ebur128 filter reads it.
// (ffmpeg reads the 12 kHz cases 0.5-0.6 dB over their true peak; the test
// logs it.)
func TestTruePeak(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, c := range []struct {
		hz, dbfs, phase float64
		againstFFmpeg   bool
	}{
		{12000, -6, math.Pi / 4, false},
		{12000, -6, 0, false},
		{997, -1, 0.3, true},
		{997, -20, 0, true},
	} {
		sig := sine(nil, c.hz, c.dbfs, 2, c.phase)
		var m Meter
		m.Add(sig)
		l := m.Levels()
		if d := l.TruePeak - c.dbfs; d > 0.2 || d < -0.4 {
			t.Errorf("%v Hz at %v dBFS, phase %.2f: true peak %.2f dBTP", c.hz, c.dbfs, c.phase, l.TruePeak)
		}
		_, _, ftp := ffmpegR128(t, sig)
		if c.againstFFmpeg && math.Abs(l.MaxTruePeak-ftp) > 0.1 {
			t.Errorf("%v Hz at %v dBFS: true peak %.2f dBTP, ffmpeg's %.2f", c.hz, c.dbfs, l.MaxTruePeak, ftp)
		}
		t.Logf("%v Hz %v dBFS phase %.2f: sample peak %.2f, true peak %.2f (max %.2f), ffmpeg %.2f", c.hz, c.dbfs, c.phase, l.SamplePeak, l.TruePeak, l.MaxTruePeak, ftp)
	}
	var m Meter
	m.Add(sine(nil, 12000, -6, 1, math.Pi/4))
	if l := m.Levels(); math.Abs(l.SamplePeak-(-6-3.01)) > 0.05 {
		t.Errorf("sample peak of a 12 kHz sine 45° off: %.2f dBFS, want -9.01", l.SamplePeak)
	}
}

func TestToneBlipsOnTheFlashFrame(t *testing.T) {
	for _, r := range [][2]int64{{30, 1}, {30000, 1001}, {25, 1}} {
		cad, _ := NewCadence(r[0], r[1])
		tone, err := NewTone(ToneHz, ToneDBFS, cad)
		if err != nil {
			t.Fatal(err)
		}
		var flashes []int64
		var buf []float32
		for n := int64(0); n < 3*r[0]/r[1]+2; n++ {
			buf = tone.Block(buf, n)
			if len(buf) != cad.Samples(n)*Channels {
				t.Fatalf("frame %d: %d values, want %d", n, len(buf), cad.Samples(n)*Channels)
			}
			var peak float64
			for _, v := range buf {
				peak = math.Max(peak, math.Abs(float64(v)))
			}
			want := DBToGain(ToneDBFS)
			if Flashes(n, r[0], r[1]) {
				flashes = append(flashes, n)
				want = DBToGain(BlipDBFS)
			}
			if math.Abs(peak-want) > want*0.01 {
				t.Fatalf("%d/%d frame %d: peak %v, want %v", r[0], r[1], n, peak, want)
			}
		}
		// One flash a second: the first frame at or after each second.
		for s, n := range flashes {
			if n*r[1] < int64(s)*r[0] || (n > 0 && (n-1)*r[1] >= int64(s)*r[0]) {
				t.Errorf("%d/%d: flash %d on frame %d", r[0], r[1], s, n)
			}
		}
		if len(flashes) != 4 {
			t.Errorf("%d/%d: flashes on %v, want 4 in 3 s", r[0], r[1], flashes)
		}
	}
	if _, err := NewTone(30000, -18, Cadence{30, 1}); err == nil {
		t.Error("a 30 kHz tone was taken")
	}
	if _, err := NewTone(1000, 3, Cadence{30, 1}); err == nil {
		t.Error("a tone at +3 dBFS was taken")
	}
}

// The bytes an encoder reads: f32le as the samples are, s16le rounded and
// clipped at full scale.
func TestSampleBytes(t *testing.T) {
	block := []float32{0, 0.5, -0.5, 1, -1, 1.5, -1.5, 1.0 / 32767}
	s16 := AppendS16LE(nil, block)
	var got []int16
	for i := 0; i < len(s16); i += 2 {
		got = append(got, int16(uint16(s16[i])|uint16(s16[i+1])<<8))
	}
	want := []int16{0, 16384, -16384, 32767, -32767, 32767, -32768, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("s16 of %v: %d, want %d", block[i], got[i], want[i])
		}
	}
	f32 := AppendF32LE(nil, block)
	if len(f32) != 4*len(block) || f32[4*1+3] != 0x3f {
		t.Errorf("f32le of 0.5: % x", f32[4:8])
	}
}
