package hevc

import (
	"bytes"
	"fmt"

	"github.com/onairhq/onair/internal/bitstream"
)

// NAL unit types (Table 7-1).
const (
	nalTrailN    = 0
	nalRASLR     = 9
	nalRADLN     = 6
	nalRASLN     = 8
	nalBLAWLP    = 16
	nalBLANLP    = 18
	nalIDRWRADL  = 19
	nalIDRNLP    = 20
	nalCRA       = 21
	nalRsvIRAP23 = 23
	nalVPS       = 32
	nalSPS       = 33
	nalPPS       = 34
	nalEOS       = 36
	nalEOB       = 37
)

// headerBytes bounds how much of a NAL unit is unescaped for its header:
// parameter sets with every extension fit, and a slice segment header's
// reference picture sets too.
const headerBytes = 4096

// maxSurfaces bounds SetSurfaces: NVDEC's decoders have 32 at most.
const maxSurfaces = 64

// maxDPB bounds the decoded picture buffer: 16 pictures and the one
// being decoded.
const maxDPB = 17

// dpbPic is a picture in the decoded picture buffer.
type dpbPic struct {
	surface  int
	poc      int32
	ref      bool // marked "used for reference" (short or long term)
	longTerm bool
	output   bool // "needed for output"
	latency  int
	ts       int64
}

// Parser turns an HEVC stream's access units into the pictures to decode
// and the pictures to show. It is not safe for concurrent use.
type Parser struct {
	sps      [16]*sps
	pps      [64]*pps
	active   *sps
	surfaces int

	dpb      []dpbPic
	first    bool // the next picture starts the stream (NoRaslOutputFlag)
	skipRASL bool // RASL pictures of the CRA that started are skipped

	prevTid0Lsb, prevTid0Msb int32
	index                    int64

	delay   int       // SetDisplayDelay
	held    []Display // shown, not yet handed out (the display delay)
	pic     Picture
	out     []Display
	pics    []*Picture
	scratch []byte
	data    []byte
	offsets []uint32
	spans   [][2]int // the current picture's slice segments in the access unit: header, end
}

// NewParser returns a parser at the start of a stream.
func NewParser() *Parser { return &Parser{first: true, surfaces: 20} }

// SetSurfaces says how many decode surfaces the decoder has; each picture
// decodes into one no picture in the buffer holds.
func (p *Parser) SetSurfaces(n int) { p.surfaces = min(max(n, 1), maxSurfaces) }

// SetDisplayDelay holds each picture to show back until n more have come
// after it (as NVIDIA's parser's display delay does): a picture handed out
// has then long been decoded when it is mapped. Its surface stays taken.
func (p *Parser) SetDisplayDelay(n int) { p.delay = n }

// Sequence is the active SPS's shape, once a picture has used one.
func (p *Parser) Sequence() (Sequence, bool) {
	s := p.active
	if s == nil {
		return Sequence{}, false
	}
	subW, subH := 1, 1
	if s.chromaFormatIDC == 1 {
		subW, subH = 2, 2
	} else if s.chromaFormatIDC == 2 {
		subW = 2
	}
	return Sequence{
		CodedWidth: s.width, CodedHeight: s.height,
		Left: subW * s.confLeft, Right: s.width - subW*s.confRight,
		Top: subH * s.confTop, Bottom: s.height - subH*s.confBottom,
		BitDepthLuma: s.bitDepthLuma, BitDepthChroma: s.bitDepthChroma, ChromaFormatIDC: s.chromaFormatIDC,
		MaxDecPicBuffering: s.maxDecPicBufferingMinus1 + 1, MaxNumReorderPics: s.maxNumReorder,
	}, true
}

// nalUnits calls fn for each NAL unit of an Annex B buffer: its bytes
// (header included, start code and trailing zero bytes not), where its
// start code began (its zero_byte included) and where its header is. nals, when not nil, says where each NAL unit's header
// starts (es.AccessUnit.NALs: the reader found them already) and the
// buffer is not searched again.
func nalUnits(au []byte, nals []int32, fn func(nal []byte, at, header int) error) error {
	next := func(from int) int { // the index of the next 00 00 01 at or after from, or -1
		i := bytes.Index(au[from:], startCode)
		if i < 0 {
			return -1
		}
		return from + i
	}
	i := -1
	if nals == nil {
		i = next(0)
	} else if len(nals) > 0 {
		i = int(nals[0]) - 3
	}
	for k := 1; i >= 0; k++ {
		start := i + 3
		at := i
		if at > 0 && au[at-1] == 0 {
			at--
		}
		end := -1
		if nals == nil {
			end = next(start)
		} else if k < len(nals) {
			end = int(nals[k]) - 3
		}
		nalEnd := end
		if end < 0 {
			nalEnd = len(au)
		}
		nal := au[start:nalEnd]
		for len(nal) > 0 && nal[len(nal)-1] == 0 { // trailing_zero_8bits and the next zero_byte
			nal = nal[:len(nal)-1]
		}
		if len(nal) >= 2 {
			if err := fn(nal, at, start); err != nil {
				return err
			}
		}
		i = end
	}
	return nil
}

var startCode = []byte{0, 0, 1}

// nalsFit reports whether nals can be where au's NAL units start: each just
// after a start code, in order, inside au.
func nalsFit(au []byte, nals []int32) bool {
	prev := int32(0)
	for _, n := range nals {
		if n < prev+3 || int(n) > len(au) || au[n-1] != 1 || au[n-2] != 0 || au[n-3] != 0 {
			return false
		}
		prev = n
	}
	return true
}

// Next reads one access unit (Annex B: parameter sets, SEI and the slice
// segments of one picture) that came with timestamp ts. It returns the
// pictures to decode, in decoding order (one, or none for an access unit
// without a picture or a RASL picture skipped), and the pictures to show
// after them, in output order. What it returns is valid until the next
// call, and so long as au is: a picture's Data may be a slice of au.
func (p *Parser) Next(au []byte, ts int64) ([]*Picture, []Display, error) {
	return p.NextNALs(au, nil, ts)
}

// NextNALs is Next for an access unit whose NAL units' headers are known
// to start at nals (es.AccessUnit.NALs), which spares searching it for
// start codes; nil nals searches.
func (p *Parser) NextNALs(au []byte, nals []int32, ts int64) ([]*Picture, []Display, error) {
	if !nalsFit(au, nals) {
		nals = nil // not where start codes end in au: search it
	}
	p.out = p.out[:0]
	p.pics = p.pics[:0]
	p.data = p.data[:0]
	p.offsets = p.offsets[:0]
	p.spans = p.spans[:0]
	var cur *Picture
	// The slice segments lie back to back in au, each after a three-byte
	// start code (the usual case): the picture's Data is then a slice of
	// au and nothing is copied. first is where the first one's start
	// code is, end where the last one ends; -1 once they do not.
	first, end := -1, -1
	err := nalUnits(au, nals, func(nal []byte, _, header int) error {
		typ := int(nal[0]>>1) & 63
		layer := (int(nal[0])&1)<<5 | int(nal[1]>>3)
		tid := int(nal[1]&7) - 1
		if layer != 0 {
			return nil // only the base layer
		}
		switch {
		case typ == nalSPS:
			r := bitstream.Reader{B: bitstream.Unescape(p.scratch, nal[2:], headerBytes)}
			p.scratch = r.B
			s, err := parseSPS(&r)
			if err != nil {
				return fmt.Errorf("SPS: %w", err)
			}
			p.sps[s.id] = s
		case typ == nalPPS:
			r := bitstream.Reader{B: bitstream.Unescape(p.scratch, nal[2:], headerBytes)}
			p.scratch = r.B
			q, err := parsePPS(&r)
			if err != nil {
				return fmt.Errorf("PPS: %w", err)
			}
			p.pps[q.id] = q
		case typ == nalEOS || typ == nalEOB:
			p.first = true
		case typ <= nalRsvIRAP23 && (typ <= 9 || typ >= nalBLAWLP): // a slice segment (VCL, not reserved)
			if cur == nil {
				pic, err := p.begin(nal, typ, tid, ts)
				if err != nil || pic == nil {
					return err
				}
				cur = pic
			} else if err := p.sliceType(cur, nal); err != nil {
				return err
			}
			code := header - 3
			switch {
			case len(p.spans) == 0:
				first = code
			case code != end:
				first = -1
			}
			end = header + len(nal)
			p.spans = append(p.spans, [2]int{header, end})
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if cur != nil {
		for _, sp := range p.spans {
			if first >= 0 {
				p.offsets = append(p.offsets, uint32(sp[0]-3-first))
				continue
			}
			p.offsets = append(p.offsets, uint32(len(p.data)))
			p.data = append(p.data, 0, 0, 1)
			p.data = append(p.data, au[sp[0]:sp[1]]...)
		}
		cur.Data, cur.SliceOffsets = p.data, p.offsets
		if first >= 0 {
			cur.Data = au[first:end:end]
		}
		p.pics = append(p.pics, cur)
		p.finish(cur)
	}
	return p.pics, p.release(false), nil
}

// Flush shows every picture still waiting, at the end of a stream, and
// forgets the buffer: the next access unit starts a stream.
func (p *Parser) Flush() []Display {
	p.out = p.out[:0]
	for p.bump() {
	}
	p.dpb = p.dpb[:0]
	p.first = true
	return p.release(true)
}

// release moves what bumping showed behind the held pictures and hands out
// those beyond the display delay (all of them at a flush), reusing out.
func (p *Parser) release(all bool) []Display {
	p.held = append(p.held, p.out...)
	n := len(p.held) - p.delay
	if all {
		n = len(p.held)
	}
	p.out = p.out[:0]
	if n <= 0 {
		return p.out
	}
	p.out = append(p.out, p.held[:n]...)
	p.held = append(p.held[:0], p.held[n:]...)
	return p.out
}

// begin reads a picture's first slice segment header and sets up the
// picture: parameters, POC, reference picture set, the buffer's marking
// and what it shows before this picture. nil without error: a RASL
// picture skipped.
func (p *Parser) begin(nal []byte, typ, tid int, ts int64) (*Picture, error) {
	pic, err := p.beginWithin(nal, typ, tid, ts, sliceHeaderBytes)
	if err == bitstream.ErrShort && len(nal) > sliceHeaderBytes {
		pic, err = p.beginWithin(nal, typ, tid, ts, headerBytes) // a long header: its reference sets
	}
	return pic, err
}

// sliceHeaderBytes is what a slice header's reading unescapes first: the
// part a decoder needs is a few dozen bytes.
const sliceHeaderBytes = 256

func (p *Parser) beginWithin(nal []byte, typ, tid int, ts int64, limit int) (*Picture, error) {
	r := bitstream.Reader{B: bitstream.Unescape(p.scratch, nal[2:], limit)}
	p.scratch = r.B
	if !r.Flag() {
		return nil, fmt.Errorf("a picture starts with a slice segment that is not its first (the access unit lost its first slice)")
	}
	irap := typ >= nalBLAWLP && typ <= nalRsvIRAP23
	if irap {
		r.Skip(1) // no_output_of_prior_pics_flag: onair shows every picture
	}
	ppsID := r.UE()
	if ppsID > 63 || p.pps[ppsID] == nil {
		return nil, fmt.Errorf("a slice refers to PPS %d, which the stream has not sent", ppsID)
	}
	q := p.pps[ppsID]
	s := p.sps[q.spsID]
	if s == nil {
		return nil, fmt.Errorf("PPS %d refers to SPS %d, which the stream has not sent", ppsID, q.spsID)
	}
	r.Skip(q.numExtraSliceHeaderBits)
	sliceType := r.UE()
	output := true
	if q.outputFlagPresent {
		output = r.Flag()
	}
	if s.separateColourPlane {
		r.Skip(2)
	}
	idr := typ == nalIDRWRADL || typ == nalIDRNLP
	noRaslOutput := idr || (typ >= nalBLAWLP && typ <= nalBLANLP) || (irap && p.first)
	if irap {
		p.skipRASL = noRaslOutput
	}
	if (typ == nalRASLN || typ == nalRASLR) && p.skipRASL {
		return nil, nil // not decodable: its references precede the CRA that started the stream
	}
	var lsb int
	var st *rps
	var slice [65]rps
	stBits, numDeltaRef := 0, 0
	var ltPOC [33]int32
	var ltCycle [33]int32
	var ltUsed, ltMSB [33]bool
	numLT := 0
	if !idr {
		lsb = r.U(s.log2MaxPocLsb)
		if !r.Flag() { // short_term_ref_pic_set_sps_flag
			slice = s.stRPS
			before := r.Pos
			if err := stRefPicSet(&r, &slice, s.numShortTermRPS, s.numShortTermRPS); err != nil {
				return nil, err
			}
			stBits = r.Pos - before
			st = &slice[s.numShortTermRPS]
		} else {
			idx := 0
			if s.numShortTermRPS > 1 {
				idx = r.U(ceilLog2(s.numShortTermRPS))
			}
			if idx >= s.numShortTermRPS {
				return nil, fmt.Errorf("a slice uses reference picture set %d of %d", idx, s.numShortTermRPS)
			}
			st = &s.stRPS[idx]
		}
		numDeltaRef = st.numDeltaPocsOfRef
		if s.longTermPresent {
			numSPS := 0
			if s.numLongTermSPS > 0 {
				numSPS = r.UE()
			}
			numLT = numSPS + r.UE()
			if numLT > 32 {
				return nil, fmt.Errorf("%d long-term pictures in a slice (32 at most)", numLT)
			}
			var cycle int32
			for i := 0; i < numLT; i++ {
				if i < numSPS {
					idx := 0
					if s.numLongTermSPS > 1 {
						idx = r.U(ceilLog2(s.numLongTermSPS))
					}
					ltPOC[i], ltUsed[i] = int32(s.ltPocLsbSPS[idx]), s.ltUsedSPS[idx]
				} else {
					ltPOC[i], ltUsed[i] = int32(r.U(s.log2MaxPocLsb)), r.Flag()
				}
				ltMSB[i] = r.Flag()
				d := int32(0)
				if ltMSB[i] {
					d = int32(r.UE())
				}
				if i == 0 || i == numSPS {
					cycle = d
				} else {
					cycle += d
				}
				ltCycle[i] = cycle
			}
		}
	}
	if r.Err == bitstream.ErrShort {
		return nil, bitstream.ErrShort // read again with more (begin), before any state changes
	}

	// 8.3.1: the picture order count.
	maxLsb := int32(1) << s.log2MaxPocLsb
	var msb int32
	if !(irap && noRaslOutput) {
		prevLsb, prevMsb := p.prevTid0Lsb, p.prevTid0Msb
		l := int32(lsb)
		switch {
		case l < prevLsb && prevLsb-l >= maxLsb/2:
			msb = prevMsb + maxLsb
		case l > prevLsb && l-prevLsb > maxLsb/2:
			msb = prevMsb - maxLsb
		default:
			msb = prevMsb
		}
	}
	poc := msb + int32(lsb)
	subLayerNonRef := typ <= 14 && typ%2 == 0
	if tid == 0 && !(typ >= nalRADLN && typ <= nalRASLR) && !subLayerNonRef {
		p.prevTid0Lsb, p.prevTid0Msb = int32(lsb), msb
	}

	// A new sequence: its SPS becomes the active one.
	if irap && noRaslOutput && (p.active == nil || p.active != s) {
		p.active = s
	}
	if p.active == nil {
		p.active = s
	}

	// 8.3.2: the reference picture set, and the buffer's marking.
	pic := &p.pic
	*pic = Picture{}
	if irap && noRaslOutput {
		// Every picture before goes: shown first (C.5.2.2, with
		// no_output_of_prior_pics_flag taken as 0).
		for p.bump() {
		}
		p.dpb = p.dpb[:0]
	}
	if len(p.dpb) >= maxDPB {
		return nil, fmt.Errorf("the decoded picture buffer holds %d pictures (16 at most)", len(p.dpb))
	}
	nb, na, nl := 0, 0, 0
	var keep [maxDPB]bool
	find := func(poc int32, lsbOnly bool, long bool) int {
		for i, d := range p.dpb {
			if !d.ref {
				continue
			}
			v := d.poc
			if lsbOnly {
				v &= maxLsb - 1
			}
			if v == poc && (long || !d.longTerm) {
				return i
			}
		}
		return -1
	}
	// The current lists by surface: bumping below compacts the buffer.
	var before, after, ltCurr [16]int
	if st != nil {
		for i := 0; i < st.numNegative; i++ {
			if j := find(poc+st.deltaS0[i], false, false); j >= 0 {
				keep[j] = true
				if st.usedS0[i] {
					before[nb] = p.dpb[j].surface
					nb++
				}
			}
		}
		for i := 0; i < st.numPositive; i++ {
			if j := find(poc+st.deltaS1[i], false, false); j >= 0 {
				keep[j] = true
				if st.usedS1[i] {
					after[na] = p.dpb[j].surface
					na++
				}
			}
		}
	}
	for i := 0; i < numLT; i++ {
		var j int
		if ltMSB[i] {
			j = find(poc-int32(lsb)+ltPOC[i]-ltCycle[i]*maxLsb, false, true)
		} else {
			j = find(ltPOC[i], true, true)
		}
		if j >= 0 {
			keep[j] = true
			p.dpb[j].longTerm = true
			if ltUsed[i] && nl < 16 {
				ltCurr[nl] = p.dpb[j].surface
				nl++
			}
		}
	}
	for i := range p.dpb {
		if !keep[i] {
			p.dpb[i].ref = false
		}
	}

	// C.5.2.2: pictures neither shown nor referenced leave; then bumping
	// while the buffer holds too many to show or is full.
	p.evict()
	for p.countOutput() > s.maxNumReorder || p.latencyExceeded(s) || len(p.dpb) >= s.maxDecPicBufferingMinus1+1 {
		if !p.bump() {
			break
		}
	}

	// The picture's surface: one no picture in the buffer holds.
	surface := -1
	for c := 0; c < p.surfaces && surface < 0; c++ {
		used := false
		for _, d := range p.dpb {
			used = used || d.surface == c
		}
		for _, d := range p.held {
			used = used || d.Surface == c
		}
		for _, d := range p.out {
			used = used || d.Surface == c // shown just now, by this access unit's bumping
		}
		if !used {
			surface = c
		}
	}
	if surface < 0 {
		return nil, fmt.Errorf("no free decode surface of %d: the stream holds more pictures than its SPS says", p.surfaces)
	}

	p.fill(pic, s, q)
	pic.CurrPicIdx = surface
	pic.POC, pic.CurrPicOrderCntVal = poc, poc
	pic.Index = p.index
	p.index++
	pic.Output = output
	pic.IntraPicFlag = sliceType == 2
	// NVIDIA's parser said ref_pic_flag 1 for TRAIL_N pictures too (the
	// H200 capture, cuda/results-2026-11-30/own-parser-run1.txt), and
	// NVDEC decoded TRAIL_N pictures byte-exact with 0 there: the
	// decoder goes by the reference picture set. 1, as NVIDIA's.
	pic.RefPicFlag = true
	if irap {
		pic.IrapPicFlag = 1
	}
	if idr {
		pic.IdrPicFlag = 1
	}
	pic.NumBitsForShortTermRPSInSlice = int32(stBits)
	pic.NumDeltaPocsOfRefRpsIdx = int32(numDeltaRef)
	// The references: every picture still marked, in buffer order.
	for i := range pic.RefPicIdx {
		pic.RefPicIdx[i] = -1
	}
	var slot [maxSurfaces]int // by surface: its place in the list
	n := 0
	for _, d := range p.dpb {
		if d.ref && n < 16 {
			pic.RefPicIdx[n] = int32(d.surface)
			pic.PicOrderCntVal[n] = d.poc
			if d.longTerm {
				pic.IsLongTerm[n] = 1
			}
			slot[d.surface] = n
			n++
		}
	}
	for i := 0; i < nb && i < 8; i++ {
		pic.RefPicSetStCurrBefore[i] = uint8(slot[before[i]])
	}
	for i := 0; i < na && i < 8; i++ {
		pic.RefPicSetStCurrAfter[i] = uint8(slot[after[i]])
	}
	for i := 0; i < nl && i < 8; i++ {
		pic.RefPicSetLtCurr[i] = uint8(slot[ltCurr[i]])
	}
	pic.NumPocStCurrBefore, pic.NumPocStCurrAfter, pic.NumPocLtCurr = int32(nb), int32(na), int32(nl)
	pic.NumPocTotalCurr = int32(nb + na + nl)
	p.first = false
	// The picture joins the buffer as the decoder will hold it.
	p.dpb = append(p.dpb, dpbPic{surface: surface, poc: poc, ref: true, output: output, ts: ts})
	return pic, nil
}

// sliceType folds a later slice segment's type into IntraPicFlag.
func (p *Parser) sliceType(pic *Picture, nal []byte) error {
	if !pic.IntraPicFlag {
		return nil
	}
	r := bitstream.Reader{B: bitstream.Unescape(p.scratch, nal[2:], 64)}
	p.scratch = r.B
	typ := int(nal[0]>>1) & 63
	if r.Flag() {
		return nil // another picture's first slice in one access unit: ignored
	}
	if typ >= nalBLAWLP && typ <= nalRsvIRAP23 {
		r.Skip(1)
	}
	q := p.pps[r.UE()&63]
	if q == nil {
		return nil
	}
	s := p.sps[q.spsID]
	if s == nil {
		return nil
	}
	if q.dependentSliceSegments && r.Flag() {
		return nil // dependent: the type is its segment's
	}
	r.Skip(ceilLog2(s.picSizeInCtbs))
	r.Skip(q.numExtraSliceHeaderBits)
	if r.UE() != 2 {
		pic.IntraPicFlag = false
	}
	return nil
}

// finish runs C.5.2.3 after the current picture: bumping while more
// pictures wait to be shown than the stream reorders.
func (p *Parser) finish(pic *Picture) {
	s := p.active
	for i := range p.dpb {
		if p.dpb[i].output && p.dpb[i].surface != pic.CurrPicIdx {
			p.dpb[i].latency++
		}
	}
	for p.countOutput() > s.maxNumReorder || p.latencyExceeded(s) {
		if !p.bump() {
			break
		}
	}
	p.evict()
}

func (p *Parser) countOutput() int {
	n := 0
	for _, d := range p.dpb {
		if d.output {
			n++
		}
	}
	return n
}

func (p *Parser) latencyExceeded(s *sps) bool {
	if s.maxLatencyIncreasePlus1 == 0 {
		return false
	}
	limit := s.maxNumReorder + s.maxLatencyIncreasePlus1 - 1
	for _, d := range p.dpb {
		if d.output && d.latency >= limit {
			return true
		}
	}
	return false
}

// bump shows the waiting picture with the smallest POC; false when none
// waits.
func (p *Parser) bump() bool {
	best := -1
	for i, d := range p.dpb {
		if d.output && (best < 0 || d.poc < p.dpb[best].poc) {
			best = i
		}
	}
	if best < 0 {
		return false
	}
	d := &p.dpb[best]
	d.output = false
	p.out = append(p.out, Display{Surface: d.surface, POC: d.poc, Timestamp: d.ts})
	p.evict()
	return true
}

// evict empties the buffers of pictures neither shown nor referenced.
func (p *Parser) evict() {
	keep := p.dpb[:0]
	for _, d := range p.dpb {
		if d.output || d.ref {
			keep = append(keep, d)
		}
	}
	p.dpb = keep
}

// fill copies the parameter sets' fields into pic.
func (p *Parser) fill(pic *Picture, s *sps, q *pps) {
	pic.PicWidthInLumaSamples, pic.PicHeightInLumaSamples = int32(s.width), int32(s.height)
	pic.Log2MinLumaCodingBlockSizeMinus3 = uint8(s.log2MinCb - 3)
	pic.Log2DiffMaxMinLumaCodingBlockSize = uint8(s.log2DiffMaxMinCb)
	pic.Log2MinTransformBlockSizeMinus2 = uint8(s.log2MinTb - 2)
	pic.Log2DiffMaxMinTransformBlockSize = uint8(s.log2DiffMaxMinTb)
	pic.PCMEnabledFlag = b8(s.pcm)
	if s.pcm {
		pic.Log2MinPCMLumaCodingBlockSizeMinus3 = uint8(s.log2MinPcmMinus3)
		pic.Log2DiffMaxMinPCMLumaCodingBlockSize = uint8(s.log2DiffMaxMinPcm)
		pic.PCMSampleBitDepthLumaMinus1 = uint8(s.pcmBitDepthLuma)
		pic.PCMSampleBitDepthChromaMinus1 = uint8(s.pcmBitDepthChroma)
		pic.PCMLoopFilterDisabledFlag = b8(s.pcmLoopFilterDisabled)
	}
	pic.StrongIntraSmoothingEnabledFlag = b8(s.strongIntraSmoothing)
	pic.MaxTransformHierarchyDepthIntra = uint8(s.maxTHDepthIntra)
	pic.MaxTransformHierarchyDepthInter = uint8(s.maxTHDepthInter)
	pic.AMPEnabledFlag = b8(s.amp)
	pic.SeparateColourPlaneFlag = b8(s.separateColourPlane)
	pic.Log2MaxPicOrderCntLsbMinus4 = uint8(s.log2MaxPocLsb - 4)
	pic.NumShortTermRefPicSets = uint8(s.numShortTermRPS)
	pic.LongTermRefPicsPresentFlag = b8(s.longTermPresent)
	pic.NumLongTermRefPicsSPS = uint8(s.numLongTermSPS)
	pic.SPSTemporalMVPEnabledFlag = b8(s.temporalMVP)
	pic.SampleAdaptiveOffsetEnabledFlag = b8(s.sao)
	pic.ScalingListEnableFlag = b8(s.scalingListEnabled)
	pic.BitDepthLumaMinus8 = uint8(s.bitDepthLuma - 8)
	pic.BitDepthChromaMinus8 = uint8(s.bitDepthChroma - 8)
	pic.ChromaFormatIDC = uint8(s.chromaFormatIDC)

	pic.Log2MaxTransformSkipBlockSizeMinus2 = uint8(q.log2MaxTransformSkipMinus2)
	pic.Log2SAOOffsetScaleLuma = uint8(q.log2SAOOffsetScaleLuma)
	pic.Log2SAOOffsetScaleChroma = uint8(q.log2SAOOffsetScaleChroma)
	pic.HighPrecisionOffsetsEnabledFlag = b8(s.highPrecisionOffsets)
	pic.SPSRangeExtensionFlag = b8(s.rangeExt)
	pic.TransformSkipRotationEnabledFlag = b8(s.transformSkipRotation)
	pic.TransformSkipContextEnabledFlag = b8(s.transformSkipContext)
	pic.ImplicitRDPCMEnabledFlag = b8(s.implicitRDPCM)
	pic.ExplicitRDPCMEnabledFlag = b8(s.explicitRDPCM)
	pic.ExtendedPrecisionProcessingFlag = b8(s.extendedPrecision)
	pic.IntraSmoothingDisabledFlag = b8(s.intraSmoothingDisabled)
	pic.PersistentRiceAdaptationEnabledFlag = b8(s.persistentRice)
	pic.CabacBypassAlignmentEnabledFlag = b8(s.cabacBypassAlignment)
	pic.PPSRangeExtensionFlag = b8(q.rangeExt)
	pic.CrossComponentPredictionEnabledFlag = b8(q.crossComponentPrediction)
	pic.ChromaQPOffsetListEnabledFlag = b8(q.chromaQPOffsetList)
	pic.DiffCuChromaQPOffsetDepth = uint8(q.diffCuChromaQPOffsetDepth)
	pic.ChromaQPOffsetListLenMinus1 = uint8(q.chromaQPOffsetListLenMinus1)
	for i := range 6 {
		pic.CbQPOffsetList[i], pic.CrQPOffsetList[i] = int8(q.cbQPOffsetList[i]), int8(q.crQPOffsetList[i])
	}

	pic.DependentSliceSegmentsEnabledFlag = b8(q.dependentSliceSegments)
	pic.SliceSegmentHeaderExtensionPresentFlag = b8(q.sliceHeaderExtension)
	pic.SignDataHidingEnabledFlag = b8(q.signDataHiding)
	pic.CuQPDeltaEnabledFlag = b8(q.cuQPDelta)
	pic.DiffCuQPDeltaDepth = uint8(q.diffCuQPDeltaDepth)
	pic.InitQPMinus26 = int8(q.initQPMinus26)
	pic.PPSCbQPOffset, pic.PPSCrQPOffset = int8(q.cbQPOffset), int8(q.crQPOffset)
	pic.ConstrainedIntraPredFlag = b8(q.constrainedIntraPred)
	pic.WeightedPredFlag, pic.WeightedBipredFlag = b8(q.weightedPred), b8(q.weightedBipred)
	pic.TransformSkipEnabledFlag = b8(q.transformSkip)
	pic.TransquantBypassEnabledFlag = b8(q.transquantBypass)
	pic.EntropyCodingSyncEnabledFlag = b8(q.entropySync)
	pic.Log2ParallelMergeLevelMinus2 = uint8(q.log2ParallelMergeLevelMinus2)
	pic.NumExtraSliceHeaderBits = uint8(q.numExtraSliceHeaderBits)
	pic.LoopFilterAcrossTilesEnabledFlag = b8(q.loopFilterAcrossTiles)
	pic.LoopFilterAcrossSlicesEnabledFlag = b8(q.loopFilterAcrossSlices)
	pic.OutputFlagPresentFlag = b8(q.outputFlagPresent)
	pic.NumRefIdxL0DefaultActiveMinus1 = uint8(q.numRefIdxL0Minus1)
	pic.NumRefIdxL1DefaultActiveMinus1 = uint8(q.numRefIdxL1Minus1)
	pic.ListsModificationPresentFlag = b8(q.listsModification)
	pic.CabacInitPresentFlag = b8(q.cabacInitPresent)
	pic.PPSSliceChromaQPOffsetsPresentFlag = b8(q.sliceChromaQPOffsets)
	pic.DeblockingFilterOverrideEnabledFlag = b8(q.deblockingOverride)
	pic.PPSDeblockingFilterDisabledFlag = b8(q.deblockingDisabled)
	pic.PPSBetaOffsetDiv2, pic.PPSTcOffsetDiv2 = int8(q.betaOffsetDiv2), int8(q.tcOffsetDiv2)
	pic.TilesEnabledFlag = b8(q.tiles)
	pic.UniformSpacingFlag = b8(q.uniformSpacing)
	if q.tiles {
		pic.NumTileColumnsMinus1, pic.NumTileRowsMinus1 = uint8(q.numTileColsMinus1), uint8(q.numTileRowsMinus1)
		cols, rows := q.tileSizes(s)
		for i := range 21 {
			pic.ColumnWidthMinus1[i], pic.RowHeightMinus1[i] = uint16(cols[i]), uint16(rows[i])
		}
	}

	// The lists in force: the PPS's, else the SPS's; flat when off.
	{
		sl := &flat
		if s.scalingListEnabled {
			sl = &s.scaling
			if q.scalingListPresent {
				sl = &q.scaling
			}
		}
		pic.ScalingList4x4 = sl.l4
		pic.ScalingList8x8 = sl.l8
		pic.ScalingList16x16 = sl.l16
		pic.ScalingList32x32 = [2][64]uint8{sl.l32[0], sl.l32[3]}
		pic.ScalingListDCCoeff16x16 = sl.dc16
		pic.ScalingListDCCoeff32x32 = [2]uint8{sl.dc32[0], sl.dc32[3]}
	}
}

var flat = flatScaling()

func b8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
