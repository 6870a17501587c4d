package audio

import "math"

// Meter measures a stereo signal the way ITU-R BS.1770-4 and EBU R128
// (Tech 3341, 3342) define: K-weighted loudness over a momentary (400 ms)
// and a short-term (3 s) window, integrated loudness with the absolute
// (−70 LUFS) and relative (−10 LU) gates, loudness range (short-term
// values, −20 LU relative gate, 10th to 95th percentile), sample peak and
// true peak (4× oversampled). Feed it blocks with Add; read it with Levels.
// Not safe for concurrent use: its owner copies Levels out.
type Meter struct {
	kw    [Channels]kWeighting
	tp    [Channels]truePeak
	acc   float64 // K-weighted energy of the current 100 ms sub-block, summed over channels
	accN  int
	subs  [30]float64 // the last 3 s of sub-blocks' mean squares, a ring
	peaks [30]float64 // their true peaks
	speak [30]float64 // their sample peaks
	nsub  int64       // sub-blocks completed
	curTP float64     // true peak of the sub-block being filled
	curSP float64
	gate  histogram // 400 ms blocks every 100 ms, for integrated loudness
	short histogram // 3 s blocks every 100 ms, for loudness range
	maxTP float64
}

// subBlock is 100 ms of sample frames: the gating blocks' step.
const subBlock = Rate / 10

// Levels is what a meter reads: loudness in LUFS (−Inf for silence or
// before a window is full), peaks in dBFS / dBTP.
type Levels struct {
	Momentary   float64 `json:"momentary_lufs"`
	ShortTerm   float64 `json:"short_term_lufs"`
	Integrated  float64 `json:"integrated_lufs"`
	Range       float64 `json:"loudness_range_lu"`
	SamplePeak  float64 `json:"sample_peak_dbfs"`   // the last 400 ms
	TruePeak    float64 `json:"true_peak_dbtp"`     // the last 400 ms
	MaxTruePeak float64 `json:"max_true_peak_dbtp"` // since the meter started
}

// Add measures a block of interleaved stereo samples.
func (m *Meter) Add(block []float32) {
	for i := 0; i+1 < len(block); i += Channels {
		var e float64
		for ch := 0; ch < Channels; ch++ {
			x := float64(block[i+ch])
			y := m.kw[ch].filter(x)
			e += y * y
			if a := math.Abs(x); a > m.curSP {
				m.curSP = a
			}
			if p := m.tp[ch].add(x); p > m.curTP {
				m.curTP = p
			}
		}
		m.acc += e
		m.accN++
		if m.accN == subBlock {
			m.endSubBlock()
		}
	}
}

func (m *Meter) endSubBlock() {
	i := m.nsub % int64(len(m.subs))
	m.subs[i], m.peaks[i], m.speak[i] = m.acc/subBlock, m.curTP, m.curSP
	m.maxTP = math.Max(m.maxTP, m.curTP)
	m.acc, m.accN, m.curTP, m.curSP = 0, 0, 0, 0
	m.nsub++
	if m.nsub >= 4 {
		m.gate.add(m.mean(4))
	}
	if m.nsub >= 30 {
		m.short.add(m.mean(30))
	}
}

// mean is the mean square of the last n sub-blocks.
func (m *Meter) mean(n int) float64 {
	var s float64
	for j := int64(0); j < int64(n); j++ {
		s += m.subs[(m.nsub-1-j)%int64(len(m.subs))]
	}
	return s / float64(n)
}

func (m *Meter) recent(v *[30]float64, n int) float64 {
	var p float64
	for j := int64(0); j < int64(n) && j < m.nsub; j++ {
		p = math.Max(p, v[(m.nsub-1-j)%int64(len(v))])
	}
	return p
}

// Levels reads the meter.
func (m *Meter) Levels() Levels {
	l := Levels{Momentary: math.Inf(-1), ShortTerm: math.Inf(-1)}
	if m.nsub >= 4 {
		l.Momentary = loudness(m.mean(4))
	}
	if m.nsub >= 30 {
		l.ShortTerm = loudness(m.mean(30))
	}
	l.Integrated = m.gate.integrated()
	l.Range = m.short.lra()
	l.SamplePeak = gainToDB(m.recent(&m.speak, 4))
	l.TruePeak = gainToDB(m.recent(&m.peaks, 4))
	l.MaxTruePeak = gainToDB(m.maxTP)
	return l
}

// loudness is BS.1770's loudness of a mean square summed over channels.
func loudness(z float64) float64 {
	if z <= 0 {
		return math.Inf(-1)
	}
	return -0.691 + 10*math.Log10(z)
}

func gainToDB(g float64) float64 {
	if g <= 0 {
		return math.Inf(-1)
	}
	return 20 * math.Log10(g)
}

// kWeighting is BS.1770's two stages at 48 kHz, a high shelf and a high
// pass, as biquads in direct form II transposed (the coefficients are the
// recommendation's for 48 kHz).
type kWeighting struct{ s [4]float64 }

func (k *kWeighting) filter(x float64) float64 {
	const (
		b0, b1, b2 = 1.53512485958697, -2.69169618940638, 1.19839281085285
		a1, a2     = -1.69065929318241, 0.73248077421585
		c1, c2     = -1.99004745483398, 0.99007225036621
	)
	y := b0*x + k.s[0]
	k.s[0] = b1*x - a1*y + k.s[1]
	k.s[1] = b2*x - a2*y
	z := y + k.s[2]
	k.s[2] = -2*y - c1*z + k.s[3]
	k.s[3] = y - c2*z
	return z
}

// The true-peak interpolator: a 49-tap windowed-sinc low pass cut off at
// the input's Nyquist frequency, centred on tap 24, so that of its four
// phases the first is the input itself (delayed 6 samples) and the other
// three are 12 taps each, every phase normalised to unity gain at DC.
const tpTaps = 12

var tpPhases = func() (ph [4][tpTaps]float64) {
	const n, centre = 4*tpTaps + 1, 4 * tpTaps / 2
	for p := 1; p < 4; p++ {
		var sum float64
		for j := 0; j < tpTaps; j++ {
			i := 4*j + p
			t := float64(i-centre) / 4 // in input samples from the centre
			w := 0.5 + 0.5*math.Cos(2*math.Pi*float64(i-centre)/float64(n+1))
			ph[p][j] = w * math.Sin(math.Pi*t) / (math.Pi * t)
			sum += ph[p][j]
		}
		for j := range ph[p] {
			ph[p][j] /= sum
		}
	}
	ph[0][tpTaps/2] = 1 // the input, tpTaps/2 samples back
	return
}()

type truePeak struct {
	// hist holds the last tpTaps inputs twice over (at pos and at
	// pos+tpTaps), so the newest tpTaps are always hist[pos+1:pos+1+tpTaps]
	// in order, oldest first, with no wrapping in the filter's loop.
	hist [2 * tpTaps]float64
	pos  int
}

// add takes one input sample and returns the largest magnitude among the
// four interpolated samples it completes.
func (t *truePeak) add(x float64) float64 {
	t.pos++
	if t.pos == tpTaps {
		t.pos = 0
	}
	t.hist[t.pos], t.hist[t.pos+tpTaps] = x, x
	w := (*[tpTaps]float64)(t.hist[t.pos+1 : t.pos+1+tpTaps]) // oldest first
	peak := w[tpTaps-1-tpTaps/2]                              // phase 0: the input itself
	if peak < 0 {
		peak = -peak
	}
	for p := 1; p < 4; p++ {
		h := &tpRev[p]
		y := h[0]*w[0] + h[1]*w[1] + h[2]*w[2] + h[3]*w[3] + h[4]*w[4] + h[5]*w[5] +
			h[6]*w[6] + h[7]*w[7] + h[8]*w[8] + h[9]*w[9] + h[10]*w[10] + h[11]*w[11]
		if y < 0 {
			y = -y
		}
		if y > peak {
			peak = y
		}
	}
	return peak
}

// tpRev are the phases' taps in the order of the window (oldest input
// first): tap j multiplies the input j samples before the newest.
var tpRev = func() (r [4][tpTaps]float64) {
	for p := range tpPhases {
		for j := range tpTaps {
			r[p][tpTaps-1-j] = tpPhases[p][j]
		}
	}
	return
}()

// histogram holds gating blocks by loudness in 0.01 LU bins from −70 LUFS
// (the absolute gate) to +10: the count and the sum of mean squares of
// each, so a mean over bins is exact and only the relative gate's edge is
// resolved to 0.01 LU. Its size does not grow with the show's length.
type histogram struct {
	count []int64
	sum   []float64
}

const (
	histLow  = -70.0
	histStep = 0.01
	histBins = 8000
)

func (h *histogram) add(z float64) {
	l := loudness(z)
	if !(l > histLow) {
		return
	}
	if h.count == nil {
		h.count, h.sum = make([]int64, histBins), make([]float64, histBins)
	}
	i := min(int((l-histLow)/histStep), histBins-1)
	h.count[i]++
	h.sum[i] += z
}

// above is the count and mean square of the blocks in bins from the one
// holding threshold (LUFS) up.
func (h *histogram) above(threshold float64) (int64, float64) {
	from := max(int((threshold-histLow)/histStep), 0)
	var n int64
	var s float64
	for i := from; i < len(h.count); i++ {
		n += h.count[i]
		s += h.sum[i]
	}
	if n == 0 {
		return 0, 0
	}
	return n, s / float64(n)
}

func (h *histogram) integrated() float64 {
	n, z := h.above(histLow)
	if n == 0 {
		return math.Inf(-1)
	}
	n, z = h.above(loudness(z) - 10)
	if n == 0 {
		return math.Inf(-1)
	}
	return loudness(z)
}

// lra is EBU Tech 3342's loudness range of the short-term blocks.
func (h *histogram) lra() float64 {
	n, z := h.above(histLow)
	if n == 0 {
		return 0
	}
	from := max(int((loudness(z)-20-histLow)/histStep), 0)
	var total int64
	for i := from; i < len(h.count); i++ {
		total += h.count[i]
	}
	if total == 0 {
		return 0
	}
	percentile := func(q float64) float64 {
		want := int64(math.Ceil(q * float64(total)))
		var seen int64
		for i := from; i < len(h.count); i++ {
			seen += h.count[i]
			if seen >= want && h.count[i] > 0 {
				return histLow + (float64(i)+0.5)*histStep
			}
		}
		return histLow + float64(len(h.count))*histStep
	}
	return percentile(0.95) - percentile(0.10)
}
