package cpu

import (
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

const toneShow = `
show {
  name       = "sound"
  size       = "320x180"
  frame_rate = "RATE"
}
source "test_pattern" "one" {
  pattern = "bars"
}
source "test_pattern" "two" {
  pattern = "bars"
}
scene "one" {
  layer {
    source = source.one
  }
}
scene "two" {
  layer {
    source = source.two
  }
}
bus "program" "pgm" {
  scene = scene.one
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
`

// readWAV decodes a WAV file with ffmpeg (the peer) into interleaved
// stereo float samples at 48 kHz.
func readWAV(t *testing.T, path string) []float32 {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-i", path, "-f", "f32le", "-ac", "2", "-ar", "48000", "-").Output()
	if err != nil {
		t.Fatalf("ffmpeg reading %s: %v", path, err)
	}
	s := make([]float32, len(out)/4)
	for i := range s {
		s[i] = math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:]))
	}
	return s
}

// flashed says whether a recorded frame shows the test pattern's flash:
// the middle of its flash box at peak white (bars never go above 75 %).
func flashed(f *frame.Frame) bool {
	cx := int((media.FlashBox[0] + media.FlashBox[2]/2) * float64(f.Width))
	cy := int((media.FlashBox[1] + media.FlashBox[3]/2) * float64(f.Height))
	var sum int
	for y := cy - 4; y < cy+4; y++ {
		for x := cx - 4; x < cx+4; x++ {
			sum += int(f.Data[0][y*f.Pitch[0]+x])
		}
	}
	return sum/64 > 220
}

// TestLipSyncThroughARecording records a bus on the CPU backend and finds,
// in the Y4M, every frame that flashes and, in the WAV beside it, every
// blip (the first sample louder than the line-up tone can be): each blip
// starts on its flash frame's first samples, within a millisecond (the
// mixer's 2-sample slack and the first quarter cycle of the tone). For a
// test pattern at 30 and at 30000/1001, where the ticks' sample counts
// vary, and for an HEVC transport stream with an AAC and an MP2 track
// (made here by onair's encoder through ffmpeg, decoded by ffmpeg), looped,
// so a loop's seam is crossed.
func TestLipSyncThroughARecording(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, c := range []struct {
		name, rate, source string
		audio              string // the clip's sound track, for a TS source
	}{
		{"pattern_30", "30", "", ""},
		{"pattern_30000_1001", "30000/1001", "", ""},
		{"ts_aac", "30", "ts", "aac"},
		{"ts_mp2", "30", "ts", "mp2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(toneShow, "RATE", c.rate, 1)
			if c.source == "ts" {
				src = strings.Replace(src, `source "test_pattern" "one" {
  pattern = "bars"
}`, `source "hevc_file" "one" {
  path = "clip.ts"
  loop = true
}`, 1)
			}
			path := writeShow(t, src)
			dir := filepath.Dir(path)
			num, den := int64(30), int64(1)
			if c.rate != "30" {
				num, den = 30000, 1001
			}
			cad, _ := audio.NewCadence(num, den)
			if c.source == "ts" {
				tone, _ := audio.NewTone(audio.ToneHz, audio.ToneDBFS, cad)
				rate := frame.Rational{Num: num, Den: den}
				tp, _ := media.NewTestPattern(media.TestPatternConfig{Pattern: media.Bars, Format: frame.NV12, Width: 320, Height: 180, Rate: rate, Tone: &tone})
				cfg := media.EncodeConfig{Path: filepath.Join(dir, "clip.ts"), Codec: "hevc", Container: "ts", Format: frame.NV12, Width: 320, Height: 180,
					Rate: rate, GOP: 30, Audio: c.audio, Tone: &tone}
				if err := media.Encode(cfg, tp, 60); err != nil {
					t.Fatal(err)
				}
			}
			p := compile(t, path, nil)
			s := startShow(t, p)
			// 100 ticks and 100 of the source's frames on time (a busy
			// machine can keep a decoder from keeping up: the bus repeats).
			waitShow(t, s, "100 ticks of 100 frames", func(sum show.Summary) bool {
				return busOf(sum, "bus.pgm").Ticks >= 100 && sourceOf(sum, "source.one").Paced >= 100
			})
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			frames := readY4M(t, filepath.Join(dir, "pgm.y4m"))
			samples := readWAV(t, filepath.Join(dir, "pgm.wav"))
			// Where a frame's block starts, from the cadence counted from
			// the recording's first frame: within a sample of where it is,
			// whatever tick the recording started on.
			const k0 = 0
			var flashes, blips []int64 // in samples from the recording's start
			for i, f := range frames {
				// A flash frame the bus repeated (a busy machine) is one flash.
				if flashed(f) && (i == 0 || !flashed(frames[i-1])) {
					flashes = append(flashes, cad.Start(k0+int64(i)))
				}
			}
			threshold := float32((audio.DBToGain(audio.ToneDBFS) + audio.DBToGain(audio.BlipDBFS)) / 2)
			last := int64(-1 << 40) // the last loud sample
			for i := int64(0); i < int64(len(samples)/2); i++ {
				if math.Abs(float64(samples[2*i])) <= float64(threshold) {
					continue
				}
				// A blip starts with a loud sample after a tick of none.
				if i-last > 1600 {
					blips = append(blips, i)
				}
				last = i
			}
			// Every frame's block is its tick's samples: with no tick missed
			// (a busy machine misses some), the WAV holds the cadence's
			// count for that many consecutive ticks, from some phase of it.
			if busOf(s.State.Summary(), "bus.pgm").Missed == 0 {
				got, n := int64(len(samples)/2), int64(len(frames))
				ok := false
				for p := int64(0); p < 5; p++ {
					ok = ok || got == cad.Start(p+n)-cad.Start(p)
				}
				if !ok {
					t.Errorf("the WAV holds %d sample frames for %d video frames; the cadence gives %d ticks %d", got, n, n, cad.Start(n))
				}
			}
			if len(flashes) < 2 || len(flashes) != len(blips) {
				t.Fatalf("%d flashes at %v and %d blips at %v in %d frames", len(flashes), flashes, len(blips), blips, len(frames))
			}
			var worst int64
			for i := range flashes {
				d := blips[i] - flashes[i]
				if d < 0 || d > audio.Rate/1000 {
					t.Errorf("flash %d at sample %d, its blip at %d: %d samples (%.2f ms) apart", i, flashes[i], blips[i], d, float64(d)*1000/audio.Rate)
				}
				worst = max(worst, d)
			}
			t.Logf("%s: %d flashes in %d frames; blips start %d samples (%.3f ms) after their flash frame's first sample at most", c.name, len(flashes), len(frames), worst, float64(worst)*1000/audio.Rate)
		})
	}
}

// TestMetersAndFadersOverHTTP reads the meters of a source and its bus in
// /status and /metrics, then mutes the source on the bus over HTTP: the
// bus's meter falls silent while the source's goes on. Bad values are
// refused with what to send.
func TestMetersAndFadersOverHTTP(t *testing.T) {
	p := compile(t, writeShow(t, strings.Replace(toneShow, "RATE", "30", 1)), nil)
	s := startShow(t, p)
	defer s.Stop()
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr()
	ev := followEvents(t, base)
	status := func() show.StatusReport {
		t.Helper()
		code, body := get(t, base+"/status")
		var st show.StatusReport
		if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil {
			t.Fatalf("/status %d: %v", code, err)
		}
		return st
	}
	// Two seconds of tone: both meters have integrated loudness.
	waitShow(t, s, "60 ticks", ticksAtLeast("bus.pgm", 60))
	st := status()
	bus, src := busOf(st.Summary, "bus.pgm").Audio, sourceOf(st.Summary, "source.one").Audio
	if bus == nil || src == nil || bus.Integrated == nil || src.Integrated == nil {
		t.Fatalf("/status has no loudness: bus %+v, source %+v", bus, src)
	}
	// A −18 dBFS tone reads −18 LUFS; a blip 12 dB up one frame a second
	// adds 1.8 LU.
	for what, i := range map[string]float64{"bus": *bus.Integrated, "source": *src.Integrated} {
		if i < -18.1 || i > -16 {
			t.Errorf("%s's integrated loudness %.2f LUFS, want -18 to -16", what, i)
		}
	}
	if sourceOf(st.Summary, "source.two").Audio == nil {
		t.Error("source.two, not on air, has no meter: sources meter what they make")
	}
	if got := bus.Strips["source.one"]; got.Mode != "follow" || got.GainDB != 0 {
		t.Errorf("bus.pgm's strip of source.one: %+v", got)
	}
	code, body := get(t, base+"/metrics")
	for _, want := range []string{`onair_bus_audio_momentary_lufs{bus="bus.pgm"}`, `onair_bus_audio_integrated_lufs{bus="bus.pgm"}`,
		`onair_source_audio_true_peak_dbtp{source="source.one"}`, `onair_source_audio_momentary_lufs{source="source.two"}`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	post := func(body string) (int, string) {
		t.Helper()
		resp, err := http.Post(base+"/buses/pgm/audio", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		body string
		code int
		says string
	}{
		{`{"source": "one", "gain_db": 200}`, 400, "from -120 to 12 dB"},
		{`{"source": "one", "mode": "loud"}`, 400, "follow, always or off"},
		{`{"source": "nope", "mute": true}`, 404, "source.one"},
		{`{"gain_db": -3}`, 400, "names its source"},
		{`{"master_db": -3}`, 200, ""},
		{`{"source": "one", "mute": true}`, 200, ""},
	} {
		if code, body := post(c.body); code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("POST %s: %d %s, want %d saying %q", c.body, code, body, c.code, c.says)
		}
	}
	// Once a momentary window (12 ticks, read every 100 ms: 16 ticks) of
	// the muted mix has gone by, the bus's meter reads silence (under the
	// −70 LUFS gate) and the source's reads on.
	from := busOf(s.State.Summary(), "bus.pgm").Ticks
	waitShow(t, s, "16 ticks after the mute", ticksAtLeast("bus.pgm", from+16))
	st = status()
	bus, src = busOf(st.Summary, "bus.pgm").Audio, sourceOf(st.Summary, "source.one").Audio
	if (bus.Momentary != nil && *bus.Momentary > -70) || src.Momentary == nil || *src.Momentary < -20 {
		t.Errorf("after the mute: bus momentary %v, source momentary %v", deref(bus.Momentary), deref(src.Momentary))
	}
	if got := bus.Strips["source.one"]; !got.Mute || bus.MasterDB == nil || *bus.MasterDB != -3 {
		t.Errorf("after the changes: strip %+v, master %v", got, bus.MasterDB)
	}
	// Unmuted with the master 12 dB up, the blips (-6 dBFS) clip: the bus
	// says so on the event stream.
	for _, body := range []string{`{"master_db": 12}`, `{"source": "one", "mute": false}`} {
		if code, b := post(body); code != 200 {
			t.Fatalf("POST %s: %d %s", body, code, b)
		}
	}
	d := ev.waitFor(t, "audio_clip", func(d map[string]any) bool { return d["bus"] == "bus.pgm" })
	if p, _ := d["peak_dbfs"].(float64); p < 0 {
		t.Errorf("audio_clip %v", d)
	}
}

func deref(v *float64) any {
	if v == nil {
		return "silence"
	}
	return *v
}

// goertzel is the power of the left channel of b at hz.
func goertzel(b []float32, hz float64) float64 {
	c := 2 * math.Cos(2*math.Pi*hz/audio.Rate)
	var s1, s2 float64
	for i := 0; i < len(b)/2; i++ {
		s := float64(b[2*i]) + c*s1 - s2
		s2, s1 = s1, s
	}
	return s1*s1 + s2*s2 - c*s1*s2
}

// TestFollowVideoThroughACut cuts a show from a 1 kHz test pattern to a
// 3 kHz one (their audio blocks follow video) and reads the recording: the
// sound changes on the tick the picture does, and through the cut no
// sample steps further than the 3 kHz tone's own step and the 5 ms ramp
// allow (a switch without the ramp can step by both amplitudes at once).
func TestFollowVideoThroughACut(t *testing.T) {
	peer.NeedFFmpeg(t)
	src := strings.Replace(strings.Replace(toneShow, "RATE", "30", 1), `source "test_pattern" "two" {
  pattern = "bars"
}`, `source "test_pattern" "two" {
  pattern = "bars"
  tone_hz = 3000
  audio {
    mode = "follow"
  }
}`, 1)
	path := writeShow(t, src)
	s := startShow(t, compile(t, path, nil))
	waitShow(t, s, "40 ticks", ticksAtLeast("bus.pgm", 40))
	if err := s.Switch("bus.pgm", "scene.two", "cut", 0); err != nil {
		t.Fatal(err)
	}
	waitShow(t, s, "80 ticks", ticksAtLeast("bus.pgm", 80))
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	frames := readY4M(t, filepath.Join(dir, "pgm.y4m"))
	samples := readWAV(t, filepath.Join(dir, "pgm.wav"))
	first, _, _ := media.ReadStamp(frames[0], frame.Rect{W: 320, H: 180})
	cut := -1
	for i, f := range frames {
		if id, _, ok := media.ReadStamp(f, frame.Rect{W: 320, H: 180}); ok && id != first {
			cut = i
			break
		}
	}
	if cut < 1 {
		t.Fatalf("no cut in the recording's %d frames", len(frames))
	}
	const n = 1600 // samples a tick at 30 fps
	heard := -1
	for i := 0; (i+1)*n*2 <= len(samples); i++ {
		b := samples[i*n*2 : (i+1)*n*2]
		if goertzel(b, 3000) > goertzel(b, 1000) {
			heard = i
			break
		}
	}
	if heard != cut {
		t.Errorf("the picture cuts on recorded frame %d, the sound on %d", cut, heard)
	}
	if flashed(frames[cut]) || flashed(frames[cut-1]) {
		t.Logf("the cut fell on a blip; its steps are the blip's")
		return
	}
	if r := busOf(s.State.Summary(), "bus.pgm").Repeats; r > 0 {
		// A repeated frame (a busy machine) leaves its tick short of
		// samples, ending in silence: a step of its own.
		t.Logf("the bus repeated %d frames; the steps are not measured", r)
		return
	}
	a := audio.DBToGain(audio.ToneDBFS)
	bound := a*2*math.Sin(math.Pi*3000/audio.Rate) + 2*a/audio.RampSamples + 1e-4
	var worst float64
	for i := (cut - 1) * n; i < (cut+1)*n; i++ {
		worst = math.Max(worst, math.Abs(float64(samples[2*i+2]-samples[2*i])))
	}
	if worst > bound {
		t.Errorf("a step of %.4f through the cut; the ramp allows %.4f", worst, bound)
	}
	t.Logf("cut on recorded frame %d, heard on %d; largest step %.4f (bound %.4f)", cut, heard, worst, bound)
}

// TestFollowVideoThroughAFade fades a show from a 1 kHz pattern to a 3 kHz
// one over ten ticks and reads each recorded tick's level of the two
// tones: the 3 kHz one rises 1/10, 2/10 ... 10/10 of its level on ten
// consecutive ticks while the 1 kHz one falls as much: the fade's own
// progress, tick by tick, as the picture's mix uses it.
func TestFollowVideoThroughAFade(t *testing.T) {
	peer.NeedFFmpeg(t)
	src := strings.Replace(strings.Replace(toneShow, "RATE", "30", 1), `source "test_pattern" "two" {
  pattern = "bars"
}`, `source "test_pattern" "two" {
  pattern = "bars"
  tone_hz = 3000
}`, 1)
	path := writeShow(t, src)
	s := startShow(t, compile(t, path, nil))
	waitShow(t, s, "40 ticks", ticksAtLeast("bus.pgm", 40))
	if err := s.Switch("bus.pgm", "scene.two", "fade", 10*time.Second/30); err != nil {
		t.Fatal(err)
	}
	waitShow(t, s, "80 ticks", ticksAtLeast("bus.pgm", 80))
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	samples := readWAV(t, filepath.Join(filepath.Dir(path), "pgm.wav"))
	// A tone's level in a tick: its Goertzel amplitude against a full
	// tick of the tone alone, over the tick's last 1200 samples (after
	// the 5 ms ramp to its gain).
	level := func(b []float32, hz float64) float64 {
		ref := make([]float32, len(b))
		a := audio.DBToGain(audio.ToneDBFS)
		for i := 0; i < len(b)/2; i++ {
			ref[2*i] = float32(a * math.Sin(2*math.Pi*hz*float64(i)/audio.Rate))
		}
		return math.Sqrt(goertzel(b, hz) / goertzel(ref, hz))
	}
	const n = 1600
	thr := (audio.DBToGain(audio.ToneDBFS) + audio.DBToGain(audio.BlipDBFS)) / 2
	var rise []float64 // the 3 kHz tone's level on each tick from its first
	var blip []bool    // whether the tick holds a blip (12 dB up: not compared)
	for i := 0; (i+1)*n*2 <= len(samples); i++ {
		b := samples[(i*n+400)*2 : (i+1)*n*2]
		g3 := level(b, 3000)
		if g3 <= 0.02 && rise == nil {
			continue
		}
		loud, short := false, true
		for _, v := range samples[i*n*2 : (i+1)*n*2] {
			loud = loud || math.Abs(float64(v)) > thr
		}
		// A tick whose source frame was repeated (a busy machine) is short
		// of its samples, silence at its end: not compared either.
		for _, v := range samples[((i+1)*n-100)*2 : (i+1)*n*2] {
			short = short && v == 0
		}
		loud = loud || short
		rise, blip = append(rise, g3), append(blip, loud)
		if g1 := level(b, 1000); len(rise) <= 10 && !loud && math.Abs(g1+g3-1) > 0.03 {
			t.Errorf("tick %d of the fade: 1 kHz at %.3f, 3 kHz at %.3f: not a crossfade", len(rise), g1, g3)
		}
	}
	if len(rise) < 10 {
		t.Fatalf("the 3 kHz tone is heard on %d ticks", len(rise))
	}
	// A tick the bus missed (a busy machine) is not drawn: the fade's
	// progress steps past it, in the picture as in the sound. Then each
	// level is still a tenth more than one before it.
	missed := busOf(s.State.Summary(), "bus.pgm").Missed > 0
	compared, prev := 0, 0.0
	for j := 0; j < 10; j++ {
		if blip[j] {
			continue
		}
		compared++
		want := float64(j+1) / 10
		if tenths := math.Round(rise[j] * 10); missed && tenths/10 > prev && tenths <= 10 {
			want = tenths / 10
		}
		if math.Abs(rise[j]-want) > 0.03 {
			t.Errorf("tick %d of the fade: the 3 kHz tone at %.3f of its level, want %.1f (levels %.3f)", j+1, rise[j], want, rise[:10])
		}
		prev = want
	}
	if compared < 8 {
		t.Errorf("only %d ticks of the fade without a blip", compared)
	}
	t.Logf("the 3 kHz tone's level over the fade's ticks: %.3f", rise[:10])
}

// onair apply's live change of a bus's audio params (the registry's
// update and its hook, liveAudio): the strips and master change on air; a
// strip of a source the bus does not carry is refused whole.
func TestAudioParamsChangeLive(t *testing.T) {
	p := compile(t, writeShow(t, strings.Replace(toneShow, "RATE", "30", 1)), nil)
	pj, _ := plan.Marshal(p)
	s := startShowWith(t, p, pj)
	defer s.Stop()
	waitShow(t, s, "a tick", ticksAtLeast("bus.pgm", 1))
	ok := []nodes.Update{update("bus.pgm", "compositor", "audio_strips", []string{"source.two mode=always gain_db=-10"}),
		update("bus.pgm", "compositor", "audio_master_db", "-6")}
	if err := s.ApplyLive(show.LiveChange{Updates: ok}, pj); err != nil {
		t.Fatal(err)
	}
	a := busOf(s.State.Summary(), "bus.pgm").Audio
	if st := a.Strips["source.two"]; st.Mode != "always" || st.GainDB != -10 || a.MasterDB == nil || *a.MasterDB != -6 {
		t.Errorf("after the live change: %+v, master %v", st, a.MasterDB)
	}
	bad := []nodes.Update{update("bus.pgm", "compositor", "audio_master_db", "-3"),
		update("bus.pgm", "compositor", "audio_strips", []string{"source.nope mute=true"})}
	if err := s.ApplyLive(show.LiveChange{Updates: bad}, pj); err == nil || !strings.Contains(err.Error(), "source.nope") {
		t.Errorf("a strip of a source not on the bus: %v", err)
	}
	if a := busOf(s.State.Summary(), "bus.pgm").Audio; *a.MasterDB != -6 {
		t.Errorf("a refused change moved the master to %v", *a.MasterDB)
	}
}

// TestDeliveryOutputsCarryTheSound records a bus of the line-up tone into
// an encoded file (a delivery output, its audio block's codec): the file
// holds an audio stream, which ffmpeg's ebur128 filter reads at the tone's
// loudness (-18 LUFS, with the blips up to 1.8 LU more).
func TestDeliveryOutputsCarryTheSound(t *testing.T) {
	peer.NeedFFmpeg(t)
	path := writeShow(t, strings.Replace(deliveryShow, "OUTPUTS", `output "file" "rec" {
  bus  = bus.pgm
  path = "rec.ts"
  audio {
    codec = "mp2"
  }
}`, 1))
	s := startShow(t, compile(t, path, nil))
	waitShow(t, s, "100 ticks", ticksAtLeast("bus.pgm", 100))
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(filepath.Dir(path), "rec.ts")
	out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-i", rec, "-map", "0:a:0",
		"-af", "ebur128=metadata=1,ametadata=print:key=lavfi.r128.I:file=-", "-f", "null", "-").CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg reading %s's sound: %v\n%s", rec, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	_, v, _ := strings.Cut(lines[len(lines)-1], "=")
	i, err := strconv.ParseFloat(v, 64)
	if err != nil || i < -18.3 || i > -16 {
		t.Errorf("the recording's sound reads %q LUFS, want the tone's -18 to -16", v)
	}
	t.Logf("the file's sound: %.2f LUFS integrated", i)
}
