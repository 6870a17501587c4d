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
	tp    [Channels][tpTaps - 1]float64 // each channel's last inputs, oldest first: the interpolator's history
	buf   []float64                     // scratch: one channel's history and a piece of the block
	acc   float64                       // K-weighted energy of the current 100 ms sub-block, summed over channels
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

// TruePeakFloor is the level (dBTP) from which the true peak is exact.
// The interpolator's output can exceed its window's largest input by at
// most the sum of its taps' magnitudes (tpGainBound, +5.5 dB), so a piece
// of a block whose sample peak (and its window's) is more than that under
// the floor cannot reach the floor: the meter does not interpolate it and
// counts its sample peak as its true peak (a lower bound, under the
// floor). A line-up tone at −18 dBFS costs no interpolation, a −6 dBFS
// blip on it does; loud programme, where a true peak matters, is always
// exact.
const TruePeakFloor = -12.0

// Add measures a block of interleaved stereo samples. It works over each
// piece of the block up to the next sub-block's edge, the two channels'
// samples copied once each behind their interpolator's history, so that
// the filters run over contiguous slices with their state in locals. It
// allocates only the first time it sees a block this long. It returns the
// block's sample peak, the largest magnitude of its samples (a NaN passed
// over): a bus's mix clips where it reaches 1.
func (m *Meter) Add(block []float32) (peak float64) {
	frames := len(block) / Channels
	for off := 0; off < frames; {
		n := min(frames-off, subBlock-m.accN)
		piece := block[off*Channels : (off+n)*Channels]
		h := tpTaps - 1 + n
		m.buf = grow64(m.buf, Channels*h)
		l, r := m.buf[:h], m.buf[h:2*h]
		copy(l, m.tp[0][:])
		copy(r, m.tp[1][:])
		li, ri := l[tpTaps-1:], r[tpTaps-1:]
		e, sp, copied := kWeightFrom(&m.kw, piece, li, ri)
		m.acc += e
		m.curSP = max(m.curSP, sp)
		peak = max(peak, sp)
		// A channel is interpolated where its windows could reach the
		// floor: the piece's peak or the history's (its last inputs).
		var interp [Channels]bool
		for ch := range interp {
			interp[ch] = max(sp, absMax(m.tp[ch][:]))*tpGainBound >= tpFloor
		}
		if (interp[0] || interp[1]) && !copied {
			deinterleave(piece, li, ri)
			copied = true
		}
		for ch, buf := range [Channels][]float64{l, r} {
			if interp[ch] {
				m.curTP = truePeakOf(buf, m.curTP)
			} else {
				m.curTP = max(m.curTP, sp)
			}
			if copied {
				copy(m.tp[ch][:], buf[n:])
			} else { // the history's last inputs, from the piece itself
				h := &m.tp[ch]
				keep := copy(h[:], h[min(n, len(h)):])
				for j := keep; j < len(h); j++ {
					h[j] = float64(piece[(n-len(h)+j)*Channels+ch])
				}
			}
		}
		m.accN += n
		off += n
		if m.accN == subBlock {
			m.endSubBlock()
		}
	}
	return peak
}

func grow64(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
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
// pass, as biquads (the coefficients are the recommendation's for 48 kHz)
// in direct form I: the last two inputs x, shelf outputs y and high-pass
// outputs z. In that form each output waits on the one before it for one
// fused multiply-add only; all else is done ahead.
type kWeighting struct{ x1, x2, y1, y2, z1, z2 float64 }

// K-weighting's coefficients at 48 kHz (BS.1770): the shelf's b0, b1, b2,
// a1, a2 and the high pass's c1, c2 (its numerator is 1, −2, 1).
const (
	kwB0, kwB1, kwB2 = 1.53512485958697, -2.69169618940638, 1.19839281085285
	kwA1, kwA2       = -1.69065929318241, 0.73248077421585
	kwC1, kwC2       = -1.99004745483398, 0.99007225036621
)

// kWeightFrom K-weights the interleaved piece (kWeight): where the CPU has
// AVX2, both channels in one instruction, reading the piece where it lies;
// elsewhere its samples are copied into l and r (as float64, a channel
// each) first, and copied says so. The same values either way.
func kWeightFrom(k *[Channels]kWeighting, piece []float32, l, r []float64) (energy, peak float64, copied bool) {
	if haveAVX2 {
		e, p := kWeightVec(k, piece)
		return e, p, false
	}
	deinterleave(piece, l, r)
	e, p := kWeight(k, l, r)
	return e, p, true
}

// deinterleave copies an interleaved stereo piece into l and r, as float64.
func deinterleave(piece []float32, l, r []float64) {
	r = r[:len(l)]
	for i := range l {
		l[i], r[i] = float64(piece[2*i]), float64(piece[2*i+1])
	}
}

// kWeight filters the two channels' samples side by side (two chains of
// dependent operations at once keep the core busy) and returns the sum
// over both of the squares of the K-weighted output (each channel's summed
// apart, then added) and the largest input magnitude. Each stage's last
// two steps are fused multiply-adds (math.FMA: one instruction where the
// CPU has FMA), so that each output waits on the one before it for one
// operation; kWeightAVX does the same operations in the same order.
func kWeight(k *[Channels]kWeighting, l, r []float64) (energy, peak float64) {
	const (
		b0, b1, b2 = kwB0, kwB1, kwB2
		a1, a2     = kwA1, kwA2
		c1, c2     = kwC1, kwC2
	)
	// (Locals, not the structs: Go keeps a struct of more than four
	// fields in memory, and each output would wait on a store.)
	lx1, lx2, ly1, ly2, lz1, lz2 := k[0].x1, k[0].x2, k[0].y1, k[0].y2, k[0].z1, k[0].z2
	rx1, rx2, ry1, ry2, rz1, rz2 := k[1].x1, k[1].x2, k[1].y1, k[1].y2, k[1].z1, k[1].z2
	var el, er float64
	r = r[:len(l)]
	for i, x := range l {
		y := math.FMA(-a1, ly1, math.FMA(-a2, ly2, math.FMA(b2, lx2, math.FMA(b1, lx1, float64(b0*x)))))
		z := math.FMA(-c1, lz1, math.FMA(-c2, lz2, y-(ly1+ly1)+ly2))
		lx2, lx1, ly2, ly1, lz2, lz1 = lx1, x, ly1, y, lz1, z
		u := r[i]
		v := math.FMA(-a1, ry1, math.FMA(-a2, ry2, math.FMA(b2, rx2, math.FMA(b1, rx1, float64(b0*u)))))
		w := math.FMA(-c1, rz1, math.FMA(-c2, rz2, v-(ry1+ry1)+ry2))
		rx2, rx1, ry2, ry1, rz2, rz1 = rx1, u, ry1, v, rz1, w
		// (float64() keeps Go from fusing the square into the sum.)
		el += float64(z * z)
		er += float64(w * w)
		// (Compared, not max(): the builtin orders NaN and −0, which
		// costs more here than the two filters.)
		if a := math.Abs(x); a > peak {
			peak = a
		}
		if a := math.Abs(u); a > peak {
			peak = a
		}
	}
	k[0] = kWeighting{lx1, lx2, ly1, ly2, lz1, lz2}
	k[1] = kWeighting{rx1, rx2, ry1, ry2, rz1, rz2}
	return el + er, peak
}

// The true-peak interpolator: a 49-tap windowed-sinc low pass cut off at
// the input's Nyquist frequency, centred on tap 24, so that of its four
// phases the first is the input itself (delayed 6 samples) and the other
// three are 12 taps each, every phase normalised to unity gain at DC.
// The window and the sinc are even about the centre, so the middle phase
// is symmetric and the last is the first reversed: truePeakOf uses that
// to do 18 multiplications an input sample, not 36.
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

// truePeakOf is the larger of above and the largest magnitude among the
// four interpolated samples each input completes, over buf[tpTaps-1:]:
// buf holds the tpTaps-1 inputs before them, oldest first.
//
// Phase 0 (the inputs, delayed) comes first; then, in chunks of tpChunk
// inputs, phases 1-3 only where they could exceed the peak so far: a chunk
// whose windows' largest input times tpGainBound is no more than it is
// skipped, which changes nothing (in programme, the quiet between the
// loud; a steady tone skips nothing).
//
// For input i the window is w = buf[i:i+tpTaps], oldest first, and phase
// p's output is Σ_j r_p[j]·w[j], r_p the phase's taps in window order.
// With s_j = w_j+w_{11-j} and d_j = w_j−w_{11-j} (j < 6): phase 2 is
// Σ r2[j]·s_j; phases 1 and 3 (r3[j] = r1[11-j]) are A+B and A−B with
// A = Σ (r1[j]+r1[11-j])/2·s_j and B = Σ (r1[j]−r1[11-j])/2·d_j, so the
// larger of their magnitudes is |A|+|B|.
func truePeakOf(buf []float64, above float64) float64 {
	const delay = tpTaps - 1 - tpTaps/2 // phase 0's input in the window
	n := len(buf) - (tpTaps - 1)
	peak := above
	if a := absMax(buf[delay : delay+n]); a > peak {
		peak = a
	}
	ha, hb, hm := &tpSym[0], &tpSym[1], &tpSym[2]
	for c := 0; c < n; c += tpChunk {
		e := min(c+tpChunk, n)
		if absMax(buf[c:e+tpTaps-1])*tpGainBound <= peak {
			continue
		}
		i := c
		if haveAVX2 { // four windows a step, the same values
			n4 := (e - c) &^ 3
			if n4 > 0 {
				if p := tpVec(buf, c, n4); p > peak {
					peak = p
				}
				i += n4
			}
		}
		for ; i < e; i++ {
			w := (*[tpTaps]float64)(buf[i : i+tpTaps])
			s0, s1, s2, s3, s4, s5 := w[0]+w[11], w[1]+w[10], w[2]+w[9], w[3]+w[8], w[4]+w[7], w[5]+w[6]
			d0, d1, d2, d3, d4, d5 := w[0]-w[11], w[1]-w[10], w[2]-w[9], w[3]-w[8], w[4]-w[7], w[5]-w[6]
			a := ha[0]*s0 + ha[1]*s1 + ha[2]*s2 + ha[3]*s3 + ha[4]*s4 + ha[5]*s5
			b := hb[0]*d0 + hb[1]*d1 + hb[2]*d2 + hb[3]*d3 + hb[4]*d4 + hb[5]*d5
			mid := hm[0]*s0 + hm[1]*s1 + hm[2]*s2 + hm[3]*s3 + hm[4]*s4 + hm[5]*s5
			p := math.Abs(a) + math.Abs(b)
			if m := math.Abs(mid); m > p {
				p = m
			}
			if p > peak {
				peak = p
			}
		}
	}
	return peak
}

// tpChunk is how many inputs truePeakOf decides to interpolate at once.
const tpChunk = 32

// tpGainBound is the largest sum of a phase's taps' magnitudes: no
// interpolated sample exceeds its window's largest input by more.
var tpGainBound = func() (g float64) {
	for _, ph := range tpPhases {
		var s float64
		for _, h := range ph {
			s += math.Abs(h)
		}
		g = max(g, s)
	}
	return
}()

// tpFloor is TruePeakFloor as a gain.
var tpFloor = DBToGain(TruePeakFloor)

// tpSym are truePeakOf's coefficients: A's, B's and phase 2's.
var tpSym = func() (c [3][tpTaps / 2]float64) {
	r := func(p, j int) float64 { return tpPhases[p][tpTaps-1-j] } // window order
	for j := range tpTaps / 2 {
		c[0][j] = (r(1, j) + r(1, tpTaps-1-j)) / 2
		c[1][j] = (r(1, j) - r(1, tpTaps-1-j)) / 2
		c[2][j] = r(2, j)
	}
	return
}()

// tpCoef is tpSym for the vector interpolator (truepeak_amd64.s): A's, B's
// and phase 2's coefficients, then the mask that clears a float64's sign.
const tpCoefs = 3*tpTaps/2 + 1

var tpCoef = func() (c [tpCoefs]float64) {
	for k := range 3 {
		copy(c[k*tpTaps/2:], tpSym[k][:])
	}
	c[tpCoefs-1] = math.Float64frombits(1<<63 - 1)
	return
}()

// histogram holds gating blocks by loudness in 0.01 LU bins from −70 LUFS
// (the absolute gate) to +10: the count and the sum of mean squares of
// each, so a mean over bins is exact and only the relative gate's edge is
// resolved to 0.01 LU. Its size does not grow with the show's length.
// Each group of histGroup bins keeps its own totals too, so that a reading
// (a mean above a gate, a percentile) walks one part group and the groups
// above it, some 180 entries, not the 8000 bins: /status and /metrics read
// every meter's integrated loudness and range.
type histogram struct {
	count  []int64
	sum    []float64
	gcount []int64 // each group's count and sum of mean squares
	gsum   []float64
}

const (
	histLow   = -70.0
	histStep  = 0.01
	histBins  = 8000
	histGroup = 100 // bins a group: histBins/histGroup groups
)

func (h *histogram) add(z float64) {
	l := loudness(z)
	if !(l > histLow) {
		return
	}
	if h.count == nil {
		h.count, h.sum = make([]int64, histBins), make([]float64, histBins)
		h.gcount, h.gsum = make([]int64, histBins/histGroup), make([]float64, histBins/histGroup)
	}
	i := min(int((l-histLow)/histStep), histBins-1)
	h.count[i]++
	h.sum[i] += z
	h.gcount[i/histGroup]++
	h.gsum[i/histGroup] += z
}

// binOf is the bin holding threshold (LUFS), 0 for one under the first.
func binOf(threshold float64) int { return max(int((threshold-histLow)/histStep), 0) }

// above is the count and mean square of the blocks in bins from the one
// holding threshold (LUFS) up: the bins up to the next group's, then the
// groups.
func (h *histogram) above(threshold float64) (int64, float64) {
	from := binOf(threshold)
	var n int64
	var s float64
	i := from
	for ; i < len(h.count) && i%histGroup != 0; i++ {
		n += h.count[i]
		s += h.sum[i]
	}
	for g := i / histGroup; g < len(h.gcount); g++ {
		n += h.gcount[g]
		s += h.gsum[g]
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
	gate := loudness(z) - 20
	total, _ := h.above(gate)
	if total == 0 {
		return 0
	}
	from := binOf(gate)
	// percentile is the centre of the first bin from `from` up at which
	// the count of blocks reaches q of them (that bin holds one): whole
	// groups passed over while they stay short of it.
	percentile := func(q float64) float64 {
		want := int64(math.Ceil(q * float64(total)))
		var seen int64
		i := from
		for ; i < len(h.count) && i%histGroup != 0; i++ { // up to the next group's first bin
			if seen += h.count[i]; seen >= want && h.count[i] > 0 {
				return histLow + (float64(i)+0.5)*histStep
			}
		}
		for ; i < len(h.count); i++ {
			if i%histGroup == 0 && seen+h.gcount[i/histGroup] < want {
				seen += h.gcount[i/histGroup]
				i += histGroup - 1
				continue
			}
			if seen += h.count[i]; seen >= want && h.count[i] > 0 {
				return histLow + (float64(i)+0.5)*histStep
			}
		}
		return histLow + float64(len(h.count))*histStep
	}
	return percentile(0.95) - percentile(0.10)
}
