package show

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/metrics"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/showerr"
)

// Meter is a source's or a bus's loudness meter, fed by the node that
// makes its blocks and read by /status, /metrics and the page.
type Meter struct {
	mu  sync.Mutex
	m   audio.Meter
	fed bool
}

// Add measures a block and returns its sample peak (audio.Meter.Add); nil
// (a silent source's frame) adds nothing.
func (m *Meter) Add(block []float32) (peak float64) {
	if block == nil {
		return 0
	}
	m.mu.Lock()
	peak = m.m.Add(block)
	m.fed = true
	m.mu.Unlock()
	return peak
}

// Levels reads the meter; false before it measured anything.
func (m *Meter) Levels() (audio.Levels, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.fed {
		return audio.Levels{}, false
	}
	return m.m.Levels(), true
}

// BusAudio is a bus's mix as the show holds it: each source's strip, the
// master fader and the mix-minus, kept across a restart of the bus's
// compositor and changed live (SetAudio); and the bus's meter.
type BusAudio struct {
	Meter Meter
	mu    sync.Mutex
	gen   uint64 // counts changes; the compositor applies a newer one at its next tick
	strip map[string]audio.Strip
	// master is the master fader in dB; minus the source the mix leaves out.
	master float64
	minus  string
}

// settings are a copy of the mix, for a compositor to apply.
func (a *BusAudio) settings() (uint64, map[string]audio.Strip, float64, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.gen, maps(a.strip), a.master, a.minus
}

func maps(m map[string]audio.Strip) map[string]audio.Strip {
	c := make(map[string]audio.Strip, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Generation counts the changes made to the mix.
func (a *BusAudio) generation() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.gen
}

// AudioParams are the compositor's audio params, as nodes/ declares them.
type AudioParams struct {
	Strips   []string `param:"audio_strips"`
	MasterDB string   `param:"audio_master_db"`
	MixMinus string   `param:"audio_mix_minus"`
}

// newBusAudio reads a compositor's audio params.
func newBusAudio(p AudioParams) (*BusAudio, error) {
	a := &BusAudio{strip: map[string]audio.Strip{}, minus: p.MixMinus}
	for _, e := range p.Strips {
		src, s, err := audio.ParseStrip(e)
		if err != nil {
			return nil, err
		}
		a.strip[src] = s
	}
	if p.MasterDB != "" {
		db, err := strconv.ParseFloat(p.MasterDB, 64)
		if err == nil {
			err = audio.CheckDB(db)
		}
		if err != nil {
			return nil, fmt.Errorf("audio_master_db %q: %w", p.MasterDB, err)
		}
		a.master = db
	}
	return a, nil
}

// check refuses strips and a mix-minus of sources not on the bus.
func (a *BusAudio) check(sources []string) error {
	for src := range a.strip {
		if !slices.Contains(sources, src) {
			return fmt.Errorf("an audio strip for %s, which is not on the bus (its sources: %s)", src, strings.Join(sources, ", "))
		}
	}
	if a.minus != "" && !slices.Contains(sources, a.minus) {
		return fmt.Errorf("mix_minus_of %s, which is not on the bus (its sources: %s)", a.minus, strings.Join(sources, ", "))
	}
	return nil
}

// SetAudio changes a bus's mix on air; the bus's next tick hears it (a
// step ramps over 5 ms). A source that is not on the bus, a fader out of
// range or NaN, or an unknown mode is refused, and nothing changes.
func (b *State) SetAudio(bus string, ch audio.Change) error {
	bs, ok := b.buses[withPrefix("bus.", bus)]
	if !ok {
		return fmt.Errorf("%w: no bus %q: the show's buses are %s", showerr.ErrNotFound, bus, strings.Join(b.busNames(), ", "))
	}
	a := bs.Audio
	if a == nil {
		return fmt.Errorf("%w: %s mixes no sound", showerr.ErrNotFound, bs.Address)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if ch.MasterDB != nil {
		if err := audio.CheckDB(*ch.MasterDB); err != nil {
			return fmt.Errorf("%w: %s: master: %w", showerr.ErrInvalid, bs.Address, err)
		}
	}
	var s audio.Strip
	src := ""
	if ch.Source != "" {
		src = withPrefix("source.", ch.Source)
		if !slices.Contains(bs.audioSourceList(), src) {
			return fmt.Errorf("%w: %s has no source %s: its sources are %s", showerr.ErrNotFound, bs.Address, src, strings.Join(bs.audioSourceList(), ", "))
		}
		s = a.strip[src]
		if ch.GainDB != nil {
			s.GainDB = *ch.GainDB
		}
		if ch.Mute != nil {
			s.Mute = *ch.Mute
		}
		if ch.Pan != nil {
			s.Pan = *ch.Pan
		}
		if ch.DelayMs != nil {
			s.DelayMs = *ch.DelayMs
		}
		if ch.Mode != "" {
			m, err := audio.ParseMode(ch.Mode)
			if err != nil {
				return fmt.Errorf("%w: %s %s: %w", showerr.ErrInvalid, bs.Address, src, err)
			}
			s.Mode = m
		}
		if err := s.Check(); err != nil {
			return fmt.Errorf("%w: %s %s: %w", showerr.ErrInvalid, bs.Address, src, err)
		}
	} else if ch.GainDB != nil || ch.Mute != nil || ch.Pan != nil || ch.Mode != "" || ch.DelayMs != nil {
		return fmt.Errorf("%w: %s: a strip's change names its source", showerr.ErrInvalid, bs.Address)
	}
	if src != "" {
		a.strip[src] = s
	}
	if ch.MasterDB != nil {
		a.master = *ch.MasterDB
	}
	a.gen++
	return nil
}

// AudioStatus is what /status says of a bus's or a source's sound.
type AudioStatus struct {
	Levels
	// A bus's mix: every source's strip and the master.
	Strips   map[string]StripStatus `json:"strips,omitempty"`
	MasterDB *float64               `json:"master_db,omitempty"`
	MixMinus string                 `json:"mix_minus_of,omitempty"`
	// FaderDB is a bus's faders' range, [audio.MinDB, audio.MaxDB] (the
	// page's faders read it).
	FaderDB []float64 `json:"fader_range_db,omitempty"`
}

// Levels are a meter's readings with silence as null (JSON has no −Inf).
type Levels struct {
	Momentary   *float64 `json:"momentary_lufs"`
	ShortTerm   *float64 `json:"short_term_lufs"`
	Integrated  *float64 `json:"integrated_lufs"`
	Range       float64  `json:"loudness_range_lu"`
	SamplePeak  *float64 `json:"sample_peak_dbfs"`
	TruePeak    *float64 `json:"true_peak_dbtp"`
	MaxTruePeak *float64 `json:"max_true_peak_dbtp"`
}

// StripStatus is one source's strip on a bus.
type StripStatus struct {
	GainDB float64 `json:"gain_db"`
	Mute   bool    `json:"mute"`
	Pan    float64 `json:"pan"`
	Mode   string  `json:"mode"`
	Delay  int     `json:"delay_ms"`
}

func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	r := math.Round(v*100) / 100
	return &r
}

func levelsOf(l audio.Levels) Levels {
	return Levels{Momentary: finite(l.Momentary), ShortTerm: finite(l.ShortTerm), Integrated: finite(l.Integrated),
		Range: math.Round(l.Range*100) / 100, SamplePeak: finite(l.SamplePeak), TruePeak: finite(l.TruePeak), MaxTruePeak: finite(l.MaxTruePeak)}
}

// audioStatus is a bus's sound for /status.
func (bs *BusState) audioStatus() *AudioStatus {
	if bs.Audio == nil { // a bus made outside NewState
		return nil
	}
	l, _ := bs.Audio.Meter.Levels()
	_, strips, master, minus := bs.Audio.settings()
	st := &AudioStatus{Levels: levelsOf(l), Strips: map[string]StripStatus{}, MasterDB: &master, MixMinus: minus,
		FaderDB: []float64{audio.MinDB, audio.MaxDB}}
	for _, src := range bs.audioSourceList() {
		s := strips[src]
		st.Strips[src] = StripStatus{GainDB: s.GainDB, Mute: s.Mute, Pan: s.Pan, Mode: s.Mode.String(), Delay: s.DelayMs}
	}
	return st
}

// sourceAudioStatus is a source's sound for /status; nil for a silent one.
func (s *SourceState) audioStatus() *AudioStatus {
	l, ok := s.Audio.Levels()
	if !ok {
		return nil
	}
	return &AudioStatus{Levels: levelsOf(l)}
}

// busMix is a compositor's mixer and what it needs each tick.
type busMix struct {
	a       *BusAudio
	mixer   *audio.Mixer
	cadence audio.Cadence
	gen     uint64
	weights []float64
	seen    []bool // scratch for visible
	clipAt  int64  // the tick of the last clip event; at most one a second
	clips   uint64 // ticks that clipped since that event
}

// clipped publishes an audio_clip event when tick k's mix reaches full
// scale (a sample at or past ±1: clipped once encoded), at most once a
// second per bus, with how many ticks clipped since the last. peak is the
// mix's sample peak, as the bus's meter read it from the block.
func (m *busMix) clipped(b *State, bs *BusState, k int64, peak float64) {
	if !(peak >= 1) {
		return
	}
	m.clips++
	second := m.cadence.Num / m.cadence.Den
	if m.clipAt != 0 && k-m.clipAt < second {
		return
	}
	if b.op != nil {
		b.op.hub.Publish("audio_clip", map[string]any{"bus": bs.Address, "tick": k, "timecode": b.TimecodeAt(k).String(),
			"peak_dbfs": math.Round(20*math.Log10(peak)*100) / 100, "ticks": m.clips})
	}
	m.clipAt, m.clips = k, 0
}

func newBusMix(a *BusAudio, sources []string, num, den int64) (*busMix, error) {
	if a == nil { // a bus made outside NewState: the defaults
		a = &BusAudio{strip: map[string]audio.Strip{}}
	}
	cad, err := audio.NewCadence(num, den)
	if err != nil {
		return nil, err
	}
	m := &busMix{a: a, mixer: audio.NewMixer(sources), cadence: cad, weights: make([]float64, len(sources)), seen: make([]bool, len(sources)), gen: ^uint64(0)}
	return m, m.apply()
}

// add gives the mix a source added on air, silent until its first block.
func (m *busMix) add(src string) {
	m.mixer.AddSource(src)
	m.weights = append(m.weights, 0)
	m.seen = append(m.seen, false)
	m.gen = ^uint64(0) // its strip, if the bus's settings name it
}

// apply takes the bus's settings into the mixer when they changed.
func (m *busMix) apply() error {
	if m.a.generation() == m.gen {
		return nil
	}
	gen, strips, master, minus := m.a.settings()
	for src := range strips {
		if m.mixer.Index(src) < 0 {
			return fmt.Errorf("audio strip for %s, which is not on the bus (its sources: %s)", src, strings.Join(m.mixer.Sources(), ", "))
		}
	}
	for i, src := range m.mixer.Sources() {
		if err := m.mixer.SetStrip(i, strips[src]); err != nil {
			return err
		}
	}
	if err := m.mixer.SetMaster(master); err != nil {
		return err
	}
	if err := m.mixer.SetMixMinus(minus); err != nil {
		return err
	}
	m.gen = gen
	return nil
}

// collectAudio emits a bus's or a source's meter as gauges
// (onair_bus_audio_*, onair_source_audio_*); a reading that is silence
// (no finite value) is left out.
func collectAudio(emit func(metrics.Sample), of string, labels [][2]string, a *AudioStatus) {
	if a == nil {
		return
	}
	for _, g := range []struct {
		name, help string
		v          *float64
	}{
		{"momentary_lufs", "EBU R128 momentary loudness (400 ms), LUFS.", a.Momentary},
		{"short_term_lufs", "EBU R128 short-term loudness (3 s), LUFS.", a.ShortTerm},
		{"integrated_lufs", "EBU R128 integrated loudness since the show started (gated), LUFS.", a.Integrated},
		{"true_peak_dbtp", "True peak of the last 400 ms (4x oversampled), dBTP.", a.TruePeak},
		{"loudness_range_lu", "EBU Tech 3342 loudness range, LU.", &a.Range},
	} {
		if g.v != nil {
			emit(metrics.Sample{Name: "onair_" + of + "_audio_" + g.name, Help: g.help, Kind: metrics.Gauge, Labels: labels, Value: *g.v})
		}
	}
}

// liveAudio is the hook of a compositor's audio params (onair apply): the
// bus's strips, master or mix-minus as the show file now says, checked
// against the bus's sources; the bus's next tick hears them.
func liveAudio(b *State, u nodes.Update, _ *liveScenes) (func(), error) {
	bs := b.buses[u.Address]
	if bs == nil || bs.Audio == nil {
		return nil, fmt.Errorf("%s: the show on air has no such bus: %w", u.Address, ErrNotFound)
	}
	v, _ := value.Normalize(u.Value)
	_, strips, master, minus := bs.Audio.settings()
	var p AudioParams
	switch u.Param {
	case "audio_strips":
		p.Strips, _ = v.([]string)
		p.MasterDB, p.MixMinus = strconv.FormatFloat(master, 'g', -1, 64), minus
	case "audio_master_db":
		p.MasterDB, _ = v.(string)
		p.MixMinus = minus
	case "audio_mix_minus":
		p.MixMinus, _ = v.(string)
		p.MasterDB = strconv.FormatFloat(master, 'g', -1, 64)
	}
	next, err := newBusAudio(p)
	if err == nil && u.Param != "audio_strips" {
		next.strip = strips
	}
	if err == nil {
		err = next.check(bs.audioSourceList())
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.Address, err)
	}
	return func() { // only the param's own part: the change's other updates set theirs
		a := bs.Audio
		a.mu.Lock()
		switch u.Param {
		case "audio_strips":
			a.strip = next.strip
		case "audio_master_db":
			a.master = next.master
		case "audio_mix_minus":
			a.minus = next.minus
		}
		a.gen++
		a.mu.Unlock()
	}, nil
}
