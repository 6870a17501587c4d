package audio

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Mode is when a source is heard on a bus.
type Mode uint8

const (
	// Follow: live while the source is visible in the scene on air,
	// crossfading with the transition's own progress.
	Follow Mode = iota
	// Always: live whatever the bus shows (a presenter's microphone).
	Always
	// Off: never heard on the bus.
	Off
)

var modeNames = [...]string{"follow", "always", "off"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode reads "follow", "always" or "off".
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if s == n {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("unknown audio mode %q: use follow, always or off", s)
}

// Fader limits, in dB: a fader at MinDB or below is silent.
const (
	MinDB = -120.0
	MaxDB = 12.0
)

// Strip is one source's channel on a bus's mixer.
type Strip struct {
	GainDB float64 // fader, MinDB..MaxDB
	Mute   bool
	Pan    float64 // balance, −1 (left only) .. 0 (both at unity) .. +1 (right only)
	Mode   Mode
	// DelayMs holds the source back this long on the bus (0..MaxDelayMs),
	// to trim its lip sync: a source whose sound leads its picture.
	DelayMs int
}

// MaxDelayMs is the longest a strip may hold its source back.
const MaxDelayMs = 1000

// Check says what is wrong with a strip's values, if anything.
func (s Strip) Check() error {
	if err := CheckDB(s.GainDB); err != nil {
		return err
	}
	if !(s.Pan >= -1 && s.Pan <= 1) {
		return fmt.Errorf("pan %v: use a value from -1 (left) to 1 (right)", s.Pan)
	}
	if s.Mode > Off {
		return fmt.Errorf("audio mode %d: use follow, always or off", s.Mode)
	}
	if s.DelayMs < 0 || s.DelayMs > MaxDelayMs {
		return fmt.Errorf("delay of %d ms: use 0 to %d ms", s.DelayMs, MaxDelayMs)
	}
	return nil
}

// CheckDB refuses a fader level outside MinDB..MaxDB (and NaN).
func CheckDB(db float64) error {
	if !(db >= MinDB && db <= MaxDB) {
		return fmt.Errorf("fader at %v dB: use a level from %v to %v dB", db, MinDB, MaxDB)
	}
	return nil
}

// RampSamples is how long a step in a gain takes: a cut, a mute or a fader
// moved lands over 5 ms, linearly, never as a click.
const RampSamples = Rate / 200

// Slack is how many sample frames each source's queue holds back at the
// bus, so that a source's cadence one sample off the bus's (both round the
// same rate, from different ticks) never leaves a tick short: the bus's
// audio is this much (42 µs) behind its picture, always.
const Slack = 2

// Mixer mixes one bus's sources into the bus's block of each tick. Each
// tick its owner pushes the block of every source frame the tick shows for
// the first time (Push), then calls Mix with each source's weight in the
// picture on air. Not safe for concurrent use: its owner serialises
// strip changes with mixing.
type Mixer struct {
	names  []string
	strips []Strip
	master float64 // linear
	minus  int     // the source left out (mix-minus), or -1
	// Each source's queue is queue[i] followed by the blocks pushed since
	// the last Mix (pend[i], not copied yet), less what Push dropped from
	// its front: qlen[i] samples, the last of that sequence. Mix copies
	// what it needs: all of it for a source heard, only the samples left
	// after the tick's for one that is not (most of a Program bus's).
	queue   [][]float32
	pend    [][][]float32
	qlen    []int
	gains   [][Channels]float64 // each source's gain at the end of the last tick
	mgain   float64
	out     []float32
	Stats   []SourceStats
	started bool
}

// SourceStats counts how a source's audio met the bus.
type SourceStats struct {
	Short   uint64 `json:"short_ticks"`     // ticks the source had too few samples for (filled with silence)
	Dropped uint64 `json:"dropped_samples"` // sample frames dropped because the source ran ahead
}

// NewMixer returns a mixer of the named sources, every strip at unity,
// following video, master at 0 dB, no mix-minus.
func NewMixer(sources []string) *Mixer {
	m := &Mixer{names: sources, strips: make([]Strip, len(sources)), master: 1, mgain: 1, minus: -1,
		queue: make([][]float32, len(sources)), gains: make([][Channels]float64, len(sources)),
		pend: make([][][]float32, len(sources)), qlen: make([]int, len(sources)),
		Stats: make([]SourceStats, len(sources))}
	for i := range m.queue {
		m.queue[i] = make([]float32, Slack*Channels, 8192)
		m.qlen[i] = Slack * Channels
	}
	return m
}

// AddSource adds a source after the others (a source added while the
// show runs): unity, following video, silent until its first Push.
func (m *Mixer) AddSource(name string) {
	m.names = append(slices.Clip(m.names), name)
	m.strips = append(m.strips, Strip{})
	m.queue = append(m.queue, make([]float32, Slack*Channels, 8192))
	m.qlen = append(m.qlen, Slack*Channels)
	m.gains = append(m.gains, [Channels]float64{})
	m.pend = append(m.pend, nil)
	m.Stats = append(m.Stats, SourceStats{})
}

// Sources are the names of the mixer's sources, in input order.
func (m *Mixer) Sources() []string { return m.names }

// Index is the input of the named source, or -1.
func (m *Mixer) Index(source string) int {
	for i, n := range m.names {
		if n == source {
			return i
		}
	}
	return -1
}

// SetStrip sets source i's strip.
func (m *Mixer) SetStrip(i int, s Strip) error {
	if i < 0 || i >= len(m.strips) {
		return fmt.Errorf("audio: no source %d on this bus", i)
	}
	if err := s.Check(); err != nil {
		return fmt.Errorf("audio: %s: %w", m.names[i], err)
	}
	// A delay changed: silence put in front of the queue, or the oldest
	// samples dropped.
	m.settle(i, m.qlen[i])
	if d := (s.DelayMs - m.strips[i].DelayMs) * Rate / 1000 * Channels; d > 0 {
		m.queue[i] = append(make([]float32, d, d+len(m.queue[i])), m.queue[i]...)
	} else if d < 0 {
		m.queue[i] = m.queue[i][min(-d, len(m.queue[i])):]
	}
	m.qlen[i] = len(m.queue[i])
	m.strips[i] = s
	return nil
}

// base is how many sample frames source i's queue holds between ticks:
// the slack and the strip's delay.
func (m *Mixer) base(i int) int { return Slack + m.strips[i].DelayMs*Rate/1000 }

// Strip is source i's strip.
func (m *Mixer) Strip(i int) Strip { return m.strips[i] }

// SetMaster sets the master fader.
func (m *Mixer) SetMaster(db float64) error {
	if err := CheckDB(db); err != nil {
		return fmt.Errorf("audio: master: %w", err)
	}
	m.master = faderGain(db)
	return nil
}

// MasterDB is the master fader's level.
func (m *Mixer) MasterDB() float64 { return 20 * math.Log10(m.master) }

// SetMixMinus leaves the named source out of the mix ("" for none): the
// mix-minus a remote guest hears back.
func (m *Mixer) SetMixMinus(source string) error {
	if source == "" {
		m.minus = -1
		return nil
	}
	i := m.Index(source)
	if i < 0 {
		return fmt.Errorf("audio: mix_minus_of %s: the source is not on this bus (its sources: %v)", source, m.names)
	}
	m.minus = i
	return nil
}

// MixMinus is the source left out, or "".
func (m *Mixer) MixMinus() string {
	if m.minus < 0 {
		return ""
	}
	return m.names[m.minus]
}

func faderGain(db float64) float64 {
	if db <= MinDB {
		return 0
	}
	return DBToGain(db)
}

// Push queues a block of source i's samples (interleaved stereo). The
// mixer reads the block until the next Mix returns: it must not change
// until then (a frame's block never does).
func (m *Mixer) Push(i int, block []float32) {
	m.pend[i] = append(m.pend[i], block)
	n := m.qlen[i] + len(block)
	// A source that runs ahead of the bus is brought back to Slack plus
	// one tick's worth, its oldest samples dropped and counted.
	if limit := (m.base(i) + 2*Rate/10) * Channels; n > limit {
		drop := n - m.base(i)*Channels
		drop -= drop % Channels
		m.Stats[i].Dropped += uint64(drop / Channels)
		n -= drop
	}
	m.qlen[i] = n
}

// settle makes queue[i] the last keep samples of source i's queue (keep
// at most qlen[i]) and empties pend[i].
func (m *Mixer) settle(i, keep int) {
	q, pend := m.queue[i], m.pend[i]
	var pn int
	for _, b := range pend {
		pn += len(b)
	}
	if fromQ := keep - pn; fromQ > 0 { // queue[i]'s last fromQ samples, then every block
		q = append(q[:0], q[len(q)-fromQ:]...)
		for _, b := range pend {
			q = append(q, b...)
		}
	} else { // the blocks' last keep samples
		skip := -fromQ
		q = q[:0]
		for _, b := range pend {
			if skip >= len(b) {
				skip -= len(b)
				continue
			}
			q = append(q, b[skip:]...)
			skip = 0
		}
	}
	clear(pend)
	m.queue[i], m.pend[i] = q, pend[:0]
}

// target is source i's gain for the tick, per channel.
func (m *Mixer) target(i int, weight float64) [Channels]float64 {
	s := m.strips[i]
	var w float64
	switch s.Mode {
	case Follow:
		w = math.Max(0, math.Min(1, weight))
	case Always:
		w = 1
	}
	if s.Mute || i == m.minus {
		w = 0
	}
	g := w * faderGain(s.GainDB)
	return [Channels]float64{g * math.Min(1, 1-s.Pan), g * math.Min(1, 1+s.Pan)}
}

// Mix returns the bus's block of count sample frames (interleaved; valid
// until the next Mix). weights[i] is how much of source i the picture on
// air shows, 0..1 (1 visible, 0 not, between during a transition); a
// follow-video source is heard at that weight. Gains that changed since
// the last tick ramp over RampSamples.
func (m *Mixer) Mix(count int, weights []float64) []float32 {
	m.out = grow(m.out, count*Channels)
	clear(m.out)
	first := !m.started
	m.started = true
	for i := range m.names {
		var w float64
		if i < len(weights) {
			w = weights[i]
		}
		to := m.target(i, w)
		from := m.gains[i]
		if first {
			from = to
		}
		have := min(m.qlen[i]/Channels, count)
		if have < count {
			m.Stats[i].Short++
		}
		if to != [Channels]float64{} || from != [Channels]float64{} {
			m.settle(i, m.qlen[i])
			q := m.queue[i]
			addRamped(m.out[:have*Channels], q[:have*Channels], from, to)
			m.queue[i] = append(q[:0], q[have*Channels:]...)
		} else { // not heard: only what stays for the next tick copied
			m.settle(i, m.qlen[i]-have*Channels)
		}
		if have < count {
			// Short (the source repeated a frame): the queue starts
			// again at its slack, so the next ticks are not short too.
			m.queue[i] = append(m.queue[i][:0], make([]float32, m.base(i)*Channels)...)
		}
		m.qlen[i] = len(m.queue[i])
		m.gains[i] = to
	}
	mfrom := m.mgain
	if first {
		mfrom = m.master
	}
	scaleRamped(m.out, mfrom, m.master)
	m.mgain = m.master
	return m.out
}

// addRamped adds src into dst at a gain going from g0 to g1 over the first
// RampSamples sample frames, then at g1.
func addRamped(dst, src []float32, g0, g1 [Channels]float64) {
	n := len(src) / Channels
	r := 0
	if g0 != g1 {
		r = min(n, RampSamples)
		for i := 0; i < r; i++ {
			f := float64(i+1) / RampSamples
			dst[2*i] += float32((g0[0] + (g1[0]-g0[0])*f) * float64(src[2*i]))
			dst[2*i+1] += float32((g0[1] + (g1[1]-g0[1])*f) * float64(src[2*i+1]))
		}
	}
	l, rt := float32(g1[0]), float32(g1[1])
	d, s := dst[2*r:2*n], src[2*r:2*n]
	for i := 0; i+1 < len(s); i += 2 {
		d[i] += l * s[i]
		d[i+1] += rt * s[i+1]
	}
}

func scaleRamped(b []float32, g0, g1 float64) {
	if g0 == 1 && g1 == 1 {
		return
	}
	n := len(b) / Channels
	r := 0
	if g0 != g1 {
		r = min(n, RampSamples)
		for i := 0; i < r; i++ {
			g := float32(g0 + (g1-g0)*float64(i+1)/RampSamples)
			b[2*i] *= g
			b[2*i+1] *= g
		}
	}
	g := float32(g1)
	for i := 2 * r; i < len(b); i++ {
		b[i] *= g
	}
}

// Change is a change to one bus's mix made on air (the control API's
// POST /buses/{bus}/audio): the fields set are changed, the rest kept; a
// strip's change names its source.
type Change struct {
	Source   string   `json:"source,omitempty"`
	GainDB   *float64 `json:"gain_db,omitempty"`
	Mute     *bool    `json:"mute,omitempty"`
	Pan      *float64 `json:"pan,omitempty"`
	Mode     string   `json:"mode,omitempty"` // follow | always | off
	DelayMs  *int     `json:"delay_ms,omitempty"`
	MasterDB *float64 `json:"master_db,omitempty"`
}

// Format writes a strip as a compositor's audio_strips param holds it:
// "source.cam gain_db=-6 mode=always mute=true pan=-0.5" (fields at their
// defaults left out).
func (s Strip) Format(source string) string {
	var b strings.Builder
	b.WriteString(source)
	if s.GainDB != 0 {
		fmt.Fprintf(&b, " gain_db=%s", strconv.FormatFloat(s.GainDB, 'g', -1, 64))
	}
	if s.Mode != Follow {
		fmt.Fprintf(&b, " mode=%s", s.Mode)
	}
	if s.Mute {
		b.WriteString(" mute=true")
	}
	if s.Pan != 0 {
		fmt.Fprintf(&b, " pan=%s", strconv.FormatFloat(s.Pan, 'g', -1, 64))
	}
	if s.DelayMs != 0 {
		fmt.Fprintf(&b, " delay_ms=%d", s.DelayMs)
	}
	return b.String()
}

// ParseStrip reads one entry of audio_strips (FormatStrip's form).
func ParseStrip(entry string) (string, Strip, error) {
	f := strings.Fields(entry)
	if len(f) == 0 {
		return "", Strip{}, fmt.Errorf("an empty audio strip: write \"source.NAME gain_db=-6 mode=follow mute=false pan=0\"")
	}
	var s Strip
	for _, kv := range f[1:] {
		k, v, ok := strings.Cut(kv, "=")
		var err error
		switch {
		case !ok:
			err = fmt.Errorf("%q is not key=value", kv)
		case k == "gain_db":
			s.GainDB, err = strconv.ParseFloat(v, 64)
		case k == "pan":
			s.Pan, err = strconv.ParseFloat(v, 64)
		case k == "mute":
			s.Mute, err = strconv.ParseBool(v)
		case k == "mode":
			s.Mode, err = ParseMode(v)
		case k == "delay_ms":
			s.DelayMs, err = strconv.Atoi(v)
		default:
			err = fmt.Errorf("unknown key %q: use gain_db, pan, mute, mode or delay_ms", k)
		}
		if err != nil {
			return "", s, fmt.Errorf("audio strip %q: %w", entry, err)
		}
	}
	if err := s.Check(); err != nil {
		return "", s, fmt.Errorf("audio strip %q: %w", entry, err)
	}
	return f[0], s, nil
}
