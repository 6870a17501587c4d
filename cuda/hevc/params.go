package hevc

import (
	"fmt"

	"github.com/onairhq/onair/internal/bitstream"
)

// The parameter sets, as far as a hardware decoder and the reference
// picture bookkeeping need them (ITU-T H.265, 7.3.2).

// rps is one short-term reference picture set (7.4.8): the negative and
// positive deltas, in the order the derivation gives them.
type rps struct {
	numNegative, numPositive int
	deltaS0, deltaS1         [16]int32
	usedS0, usedS1           [16]bool
	// numDeltaPocsOfRef is NumDeltaPocs[RefRpsIdx] of a predicted set, 0
	// for one coded explicitly.
	numDeltaPocsOfRef int
}

func (s *rps) numDelta() int { return s.numNegative + s.numPositive }

// scalingLists are the four sizes' lists in coded (diagonal) order.
type scalingLists struct {
	l4         [6][16]uint8
	l8         [6][64]uint8
	l16        [6][64]uint8
	l32        [6][64]uint8 // matrixId 0 and 3 are coded; 1, 2, 4, 5 unused in 4:2:0
	dc16, dc32 [6]uint8
}

type sps struct {
	id                             int
	maxSubLayersMinus1             int
	chromaFormatIDC                int
	separateColourPlane            bool
	width, height                  int
	confLeft, confRight            int
	confTop, confBottom            int
	bitDepthLuma, bitDepthChroma   int
	log2MaxPocLsb                  int
	maxDecPicBufferingMinus1       int // of the highest sub-layer
	maxNumReorder                  int
	maxLatencyIncreasePlus1        int
	log2MinCb, log2DiffMaxMinCb    int
	log2MinTb, log2DiffMaxMinTb    int
	maxTHDepthInter                int
	maxTHDepthIntra                int
	scalingListEnabled             bool
	scaling                        scalingLists
	amp, sao, pcm                  bool
	pcmBitDepthLuma                int // minus 1
	pcmBitDepthChroma              int // minus 1
	log2MinPcmMinus3               int
	log2DiffMaxMinPcm              int
	pcmLoopFilterDisabled          bool
	numShortTermRPS                int
	stRPS                          [65]rps
	longTermPresent                bool
	numLongTermSPS                 int
	ltPocLsbSPS                    [33]int
	ltUsedSPS                      [33]bool
	temporalMVP                    bool
	strongIntraSmoothing           bool
	rangeExt                       bool
	transformSkipRotation          bool
	transformSkipContext           bool
	implicitRDPCM, explicitRDPCM   bool
	extendedPrecision              bool
	intraSmoothingDisabled         bool
	highPrecisionOffsets           bool
	persistentRice                 bool
	cabacBypassAlignment           bool
	ctbLog2, picWidthInCtbs        int
	picHeightInCtbs, picSizeInCtbs int
}

type pps struct {
	id, spsID                              int
	dependentSliceSegments                 bool
	outputFlagPresent                      bool
	numExtraSliceHeaderBits                int
	signDataHiding, cabacInitPresent       bool
	numRefIdxL0Minus1, numRefIdxL1Minus1   int
	initQPMinus26                          int
	constrainedIntraPred, transformSkip    bool
	cuQPDelta                              bool
	diffCuQPDeltaDepth                     int
	cbQPOffset, crQPOffset                 int
	sliceChromaQPOffsets                   bool
	weightedPred, weightedBipred           bool
	transquantBypass                       bool
	tiles, entropySync                     bool
	numTileColsMinus1, numTileRowsMinus1   int
	uniformSpacing                         bool
	colWidthMinus1, rowHeightMinus1        [21]int
	loopFilterAcrossTiles                  bool
	loopFilterAcrossSlices                 bool
	deblockingOverride, deblockingDisabled bool
	betaOffsetDiv2, tcOffsetDiv2           int
	scalingListPresent                     bool
	scaling                                scalingLists
	listsModification                      bool
	log2ParallelMergeLevelMinus2           int
	sliceHeaderExtension                   bool
	rangeExt                               bool
	log2MaxTransformSkipMinus2             int
	crossComponentPrediction               bool
	chromaQPOffsetList                     bool
	diffCuChromaQPOffsetDepth              int
	chromaQPOffsetListLenMinus1            int
	cbQPOffsetList, crQPOffsetList         [6]int
	log2SAOOffsetScaleLuma                 int
	log2SAOOffsetScaleChroma               int
}

// profileTierLevel skips profile_tier_level(1, maxSubLayersMinus1).
func profileTierLevel(r *bitstream.Reader, maxSubLayersMinus1 int) {
	r.Skip(88) // general profile: space, tier, idc, 32 compatibility flags, 4 flags, 43 + 1 bits
	r.Skip(8)  // general_level_idc
	var prof, lvl [8]bool
	for i := 0; i < maxSubLayersMinus1; i++ {
		prof[i], lvl[i] = r.Flag(), r.Flag()
	}
	if maxSubLayersMinus1 > 0 {
		for i := maxSubLayersMinus1; i < 8; i++ {
			r.Skip(2)
		}
	}
	for i := 0; i < maxSubLayersMinus1; i++ {
		if prof[i] {
			r.Skip(88)
		}
		if lvl[i] {
			r.Skip(8)
		}
	}
}

var defaultIntra8 = [64]uint8{
	16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 17, 16, 17, 16, 17, 18, 17, 18, 18, 17, 18, 21, 19, 20, 21, 20, 19, 21, 24, 22, 22, 24,
	24, 22, 22, 24, 25, 25, 27, 30, 27, 25, 25, 29, 31, 35, 35, 31, 29, 36, 41, 44, 41, 36, 47, 54, 54, 47, 65, 70, 65, 88, 88, 115}
var defaultInter8 = [64]uint8{
	16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 17, 17, 17, 17, 17, 18, 18, 18, 18, 18, 18, 20, 20, 20, 20, 20, 20, 20, 24, 24, 24, 24,
	24, 24, 24, 24, 25, 25, 25, 25, 25, 25, 25, 28, 28, 28, 28, 28, 28, 33, 33, 33, 33, 33, 41, 41, 41, 41, 54, 54, 54, 71, 71, 91}

// flatScaling is Flat_4x4_16 and its larger kin: every entry 16, what
// "scaling lists off" means, and what NVIDIA's parser hands the decoder
// then.
func flatScaling() scalingLists {
	var s scalingLists
	for m := 0; m < 6; m++ {
		for i := range s.l4[m] {
			s.l4[m][i] = 16
		}
		for i := range 64 {
			s.l8[m][i], s.l16[m][i], s.l32[m][i] = 16, 16, 16
		}
		s.dc16[m], s.dc32[m] = 16, 16
	}
	return s
}

// defaultScaling is the specification's default lists (Tables 7-5, 7-6).
func defaultScaling() scalingLists {
	var s scalingLists
	for m := 0; m < 6; m++ {
		for i := range s.l4[m] {
			s.l4[m][i] = 16
		}
		d := defaultIntra8
		if m >= 3 {
			d = defaultInter8
		}
		s.l8[m], s.l16[m], s.l32[m] = d, d, d
		s.dc16[m], s.dc32[m] = 16, 16
	}
	return s
}

// list returns sizeId's list of matrixId (the 4x4 ones widened) and its DC.
func (s *scalingLists) list(sizeID, m int) ([]uint8, *uint8) {
	switch sizeID {
	case 0:
		return s.l4[m][:], nil
	case 1:
		return s.l8[m][:], nil
	case 2:
		return s.l16[m][:], &s.dc16[m]
	}
	return s.l32[m][:], &s.dc32[m]
}

// scalingListData reads scaling_list_data() (7.3.4) over the defaults.
func scalingListData(r *bitstream.Reader) scalingLists {
	s := defaultScaling()
	for sizeID := 0; sizeID < 4; sizeID++ {
		step := 1
		if sizeID == 3 {
			step = 3
		}
		for m := 0; m < 6; m += step {
			list, dc := s.list(sizeID, m)
			if !r.Flag() { // scaling_list_pred_mode_flag
				delta := r.UE() * step
				if delta != 0 && delta <= m {
					ref, refDC := s.list(sizeID, m-delta)
					copy(list, ref)
					if dc != nil {
						*dc = *refDC
					}
				} else { // the default list
					def := defaultScaling()
					ref, refDC := def.list(sizeID, m)
					copy(list, ref)
					if dc != nil {
						*dc = *refDC
					}
				}
				continue
			}
			next := 8
			n := min(64, 1<<(4+(sizeID<<1)))
			if sizeID > 1 {
				next = r.SE() + 8
				*dc = uint8(next)
			}
			for i := 0; i < n; i++ {
				next = (next + r.SE() + 256) % 256
				list[i] = uint8(next)
			}
		}
	}
	// 32x32 chroma lists (4:4:4 only) copy from the 16x16 ones; unused here.
	return s
}

// stRefPicSet reads st_ref_pic_set(idx) (7.3.7) into sets[idx]; num is
// num_short_term_ref_pic_sets (idx == num: the set coded in a slice
// header).
func stRefPicSet(r *bitstream.Reader, sets *[65]rps, idx, num int) error {
	s := &sets[idx]
	*s = rps{}
	inter := false
	if idx != 0 {
		inter = r.Flag()
	}
	if inter {
		deltaIdx := 1
		if idx == num {
			deltaIdx = r.UE() + 1
		}
		if deltaIdx > idx {
			return fmt.Errorf("a reference picture set predicted from set %d of %d", idx-deltaIdx, idx)
		}
		sign := r.U(1)
		deltaRps := int32((1 - 2*sign) * (r.UE() + 1))
		ref := &sets[idx-deltaIdx]
		n := ref.numDelta()
		var used, useDelta [33]bool
		for j := 0; j <= n; j++ {
			used[j] = r.Flag()
			useDelta[j] = true
			if !used[j] {
				useDelta[j] = r.Flag()
			}
		}
		s.numDeltaPocsOfRef = n
		i := 0
		for j := ref.numPositive - 1; j >= 0; j-- {
			d := ref.deltaS1[j] + deltaRps
			if d < 0 && useDelta[ref.numNegative+j] && i < 16 {
				s.deltaS0[i], s.usedS0[i] = d, used[ref.numNegative+j]
				i++
			}
		}
		if deltaRps < 0 && useDelta[n] && i < 16 {
			s.deltaS0[i], s.usedS0[i] = deltaRps, used[n]
			i++
		}
		for j := 0; j < ref.numNegative; j++ {
			d := ref.deltaS0[j] + deltaRps
			if d < 0 && useDelta[j] && i < 16 {
				s.deltaS0[i], s.usedS0[i] = d, used[j]
				i++
			}
		}
		s.numNegative = i
		i = 0
		for j := ref.numNegative - 1; j >= 0; j-- {
			d := ref.deltaS0[j] + deltaRps
			if d > 0 && useDelta[j] && i < 16 {
				s.deltaS1[i], s.usedS1[i] = d, used[j]
				i++
			}
		}
		if deltaRps > 0 && useDelta[n] && i < 16 {
			s.deltaS1[i], s.usedS1[i] = deltaRps, used[n]
			i++
		}
		for j := 0; j < ref.numPositive; j++ {
			d := ref.deltaS1[j] + deltaRps
			if d > 0 && useDelta[ref.numNegative+j] && i < 16 {
				s.deltaS1[i], s.usedS1[i] = d, used[ref.numNegative+j]
				i++
			}
		}
		s.numPositive = i
		return r.Err
	}
	s.numNegative, s.numPositive = r.UE(), r.UE()
	if s.numNegative > 16 || s.numPositive > 16 || s.numNegative+s.numPositive > 16 {
		return fmt.Errorf("a reference picture set of %d+%d pictures (16 at most)", s.numNegative, s.numPositive)
	}
	var poc int32
	for i := 0; i < s.numNegative; i++ {
		poc -= int32(r.UE() + 1)
		s.deltaS0[i], s.usedS0[i] = poc, r.Flag()
	}
	poc = 0
	for i := 0; i < s.numPositive; i++ {
		poc += int32(r.UE() + 1)
		s.deltaS1[i], s.usedS1[i] = poc, r.Flag()
	}
	return r.Err
}

// hrdParameters skips hrd_parameters() (E.2.2).
func hrdParameters(r *bitstream.Reader, common bool, maxSubLayersMinus1 int) {
	nal, vcl, subPic := false, false, false
	if common {
		nal, vcl = r.Flag(), r.Flag()
		if nal || vcl {
			subPic = r.Flag()
			if subPic {
				r.Skip(8 + 5 + 1 + 5)
			}
			r.Skip(4 + 4)
			if subPic {
				r.Skip(4)
			}
			r.Skip(5 + 5 + 5)
		}
	}
	for i := 0; i <= maxSubLayersMinus1; i++ {
		fixedGeneral := r.Flag()
		fixedCVS := true
		if !fixedGeneral {
			fixedCVS = r.Flag()
		}
		lowDelay := false
		if fixedCVS {
			r.UE()
		} else {
			lowDelay = r.Flag()
		}
		cpbCnt := 1
		if !lowDelay {
			cpbCnt = r.UE() + 1
		}
		for k := 0; k < 2; k++ {
			if (k == 0 && nal) || (k == 1 && vcl) {
				for j := 0; j < cpbCnt && r.Err == nil; j++ {
					r.UE()
					r.UE()
					if subPic {
						r.UE()
						r.UE()
					}
					r.Skip(1)
				}
			}
		}
	}
}

// vui skips vui_parameters() (E.2.1).
func vui(r *bitstream.Reader, maxSubLayersMinus1 int) {
	if r.Flag() { // aspect_ratio_info_present_flag
		if r.U(8) == 255 {
			r.Skip(32)
		}
	}
	if r.Flag() { // overscan_info_present_flag
		r.Skip(1)
	}
	if r.Flag() { // video_signal_type_present_flag
		r.Skip(4)
		if r.Flag() {
			r.Skip(24)
		}
	}
	if r.Flag() { // chroma_loc_info_present_flag
		r.UE()
		r.UE()
	}
	r.Skip(3)     // neutral_chroma_indication, field_seq, frame_field_info_present
	if r.Flag() { // default_display_window_flag
		r.UE()
		r.UE()
		r.UE()
		r.UE()
	}
	if r.Flag() { // vui_timing_info_present_flag
		r.Skip(64)
		if r.Flag() {
			r.UE()
		}
		if r.Flag() { // vui_hrd_parameters_present_flag
			hrdParameters(r, true, maxSubLayersMinus1)
		}
	}
	if r.Flag() { // bitstream_restriction_flag
		r.Skip(3)
		r.UE()
		r.UE()
		r.UE()
		r.UE()
		r.UE()
	}
}

func parseSPS(r *bitstream.Reader) (*sps, error) {
	s := &sps{}
	r.Skip(4) // sps_video_parameter_set_id
	s.maxSubLayersMinus1 = r.U(3)
	r.Skip(1)
	profileTierLevel(r, s.maxSubLayersMinus1)
	s.id = r.UE()
	if s.id > 15 {
		return nil, fmt.Errorf("SPS id %d (0 to 15)", s.id)
	}
	s.chromaFormatIDC = r.UE()
	if s.chromaFormatIDC == 3 {
		s.separateColourPlane = r.Flag()
	}
	s.width, s.height = r.UE(), r.UE()
	if r.Flag() {
		s.confLeft, s.confRight, s.confTop, s.confBottom = r.UE(), r.UE(), r.UE(), r.UE()
	}
	s.bitDepthLuma, s.bitDepthChroma = r.UE()+8, r.UE()+8
	s.log2MaxPocLsb = r.UE() + 4
	if s.log2MaxPocLsb > 16 {
		return nil, fmt.Errorf("log2_max_pic_order_cnt_lsb %d (16 at most)", s.log2MaxPocLsb)
	}
	allLayers := r.Flag()
	first := s.maxSubLayersMinus1
	if allLayers {
		first = 0
	}
	for i := first; i <= s.maxSubLayersMinus1; i++ {
		s.maxDecPicBufferingMinus1, s.maxNumReorder, s.maxLatencyIncreasePlus1 = r.UE(), r.UE(), r.UE()
	}
	s.log2MinCb = r.UE() + 3
	s.log2DiffMaxMinCb = r.UE()
	s.log2MinTb = r.UE() + 2
	s.log2DiffMaxMinTb = r.UE()
	s.maxTHDepthInter, s.maxTHDepthIntra = r.UE(), r.UE()
	s.scalingListEnabled = r.Flag()
	if s.scalingListEnabled {
		s.scaling = defaultScaling()
		if r.Flag() {
			s.scaling = scalingListData(r)
		}
	}
	s.amp, s.sao, s.pcm = r.Flag(), r.Flag(), r.Flag()
	if s.pcm {
		s.pcmBitDepthLuma, s.pcmBitDepthChroma = r.U(4), r.U(4)
		s.log2MinPcmMinus3, s.log2DiffMaxMinPcm = r.UE(), r.UE()
		s.pcmLoopFilterDisabled = r.Flag()
	}
	s.numShortTermRPS = r.UE()
	if s.numShortTermRPS > 64 {
		return nil, fmt.Errorf("%d short-term reference picture sets (64 at most)", s.numShortTermRPS)
	}
	for i := 0; i < s.numShortTermRPS; i++ {
		if err := stRefPicSet(r, &s.stRPS, i, s.numShortTermRPS); err != nil {
			return nil, err
		}
	}
	s.longTermPresent = r.Flag()
	if s.longTermPresent {
		s.numLongTermSPS = r.UE()
		if s.numLongTermSPS > 32 {
			return nil, fmt.Errorf("%d long-term pictures in the SPS (32 at most)", s.numLongTermSPS)
		}
		for i := 0; i < s.numLongTermSPS; i++ {
			s.ltPocLsbSPS[i], s.ltUsedSPS[i] = r.U(s.log2MaxPocLsb), r.Flag()
		}
	}
	s.temporalMVP, s.strongIntraSmoothing = r.Flag(), r.Flag()
	if r.Flag() {
		vui(r, s.maxSubLayersMinus1)
	}
	if r.Flag() { // sps_extension_present_flag
		s.rangeExt = r.Flag()
		r.Skip(3 + 4) // multilayer, 3d, scc, 4 bits
		if s.rangeExt {
			s.transformSkipRotation, s.transformSkipContext = r.Flag(), r.Flag()
			s.implicitRDPCM, s.explicitRDPCM = r.Flag(), r.Flag()
			s.extendedPrecision, s.intraSmoothingDisabled = r.Flag(), r.Flag()
			s.highPrecisionOffsets, s.persistentRice, s.cabacBypassAlignment = r.Flag(), r.Flag(), r.Flag()
		}
	}
	if r.Err != nil {
		return nil, r.Err
	}
	switch {
	case s.log2MinCb > 6 || s.log2MinCb+s.log2DiffMaxMinCb > 6 || s.log2DiffMaxMinCb > 3:
		return nil, fmt.Errorf("coding blocks of 2^%d to 2^%d (8 to 64 pixels)", s.log2MinCb, s.log2MinCb+s.log2DiffMaxMinCb)
	case s.chromaFormatIDC > 3 || s.bitDepthLuma > 16 || s.bitDepthChroma > 16:
		return nil, fmt.Errorf("chroma format %d, %d/%d-bit", s.chromaFormatIDC, s.bitDepthLuma, s.bitDepthChroma)
	case s.maxDecPicBufferingMinus1 > 15 || s.maxNumReorder > s.maxDecPicBufferingMinus1:
		return nil, fmt.Errorf("a decoded picture buffer of %d, reordering %d (16 at most)", s.maxDecPicBufferingMinus1+1, s.maxNumReorder)
	}
	minCb := 1 << s.log2MinCb
	if s.width <= 0 || s.height <= 0 || s.width%minCb != 0 || s.height%minCb != 0 || s.width > 16888 || s.height > 16888 {
		return nil, fmt.Errorf("picture size %dx%d is not whole %d-pixel coding blocks", s.width, s.height, minCb)
	}
	s.ctbLog2 = s.log2MinCb + s.log2DiffMaxMinCb
	ctb := 1 << s.ctbLog2
	s.picWidthInCtbs = (s.width + ctb - 1) / ctb
	s.picHeightInCtbs = (s.height + ctb - 1) / ctb
	s.picSizeInCtbs = s.picWidthInCtbs * s.picHeightInCtbs
	return s, nil
}

func parsePPS(r *bitstream.Reader) (*pps, error) {
	// Without tiles, uniform_spacing_flag and
	// loop_filter_across_tiles_enabled_flag are inferred 1 (7.4.3.3.1), as
	// NVIDIA's parser fills them.
	p := &pps{uniformSpacing: true, loopFilterAcrossTiles: true}
	p.id, p.spsID = r.UE(), r.UE()
	if p.id > 63 || p.spsID > 15 {
		return nil, fmt.Errorf("PPS id %d, SPS id %d (0 to 63, 0 to 15)", p.id, p.spsID)
	}
	p.dependentSliceSegments, p.outputFlagPresent = r.Flag(), r.Flag()
	p.numExtraSliceHeaderBits = r.U(3)
	p.signDataHiding, p.cabacInitPresent = r.Flag(), r.Flag()
	p.numRefIdxL0Minus1, p.numRefIdxL1Minus1 = r.UE(), r.UE()
	p.initQPMinus26 = r.SE()
	p.constrainedIntraPred, p.transformSkip, p.cuQPDelta = r.Flag(), r.Flag(), r.Flag()
	if p.cuQPDelta {
		p.diffCuQPDeltaDepth = r.UE()
	}
	p.cbQPOffset, p.crQPOffset = r.SE(), r.SE()
	p.sliceChromaQPOffsets = r.Flag()
	p.weightedPred, p.weightedBipred = r.Flag(), r.Flag()
	p.transquantBypass = r.Flag()
	p.tiles, p.entropySync = r.Flag(), r.Flag()
	if p.tiles {
		p.numTileColsMinus1, p.numTileRowsMinus1 = r.UE(), r.UE()
		if p.numTileColsMinus1 > 19 || p.numTileRowsMinus1 > 21 {
			return nil, fmt.Errorf("%dx%d tiles (20x22 at most)", p.numTileColsMinus1+1, p.numTileRowsMinus1+1)
		}
		p.uniformSpacing = r.Flag()
		if !p.uniformSpacing {
			for i := 0; i < p.numTileColsMinus1; i++ {
				p.colWidthMinus1[i] = r.UE()
			}
			for i := 0; i < p.numTileRowsMinus1; i++ {
				p.rowHeightMinus1[i] = r.UE()
			}
		}
		p.loopFilterAcrossTiles = r.Flag()
	}
	p.loopFilterAcrossSlices = r.Flag()
	if r.Flag() { // deblocking_filter_control_present_flag
		p.deblockingOverride, p.deblockingDisabled = r.Flag(), r.Flag()
		if !p.deblockingDisabled {
			p.betaOffsetDiv2, p.tcOffsetDiv2 = r.SE(), r.SE()
		}
	}
	p.scalingListPresent = r.Flag()
	if p.scalingListPresent {
		p.scaling = scalingListData(r)
	}
	p.listsModification = r.Flag()
	p.log2ParallelMergeLevelMinus2 = r.UE()
	p.sliceHeaderExtension = r.Flag()
	if r.Flag() { // pps_extension_present_flag
		p.rangeExt = r.Flag()
		r.Skip(3 + 4)
		if p.rangeExt {
			if p.transformSkip {
				p.log2MaxTransformSkipMinus2 = r.UE()
			}
			p.crossComponentPrediction, p.chromaQPOffsetList = r.Flag(), r.Flag()
			if p.chromaQPOffsetList {
				p.diffCuChromaQPOffsetDepth, p.chromaQPOffsetListLenMinus1 = r.UE(), r.UE()
				if p.chromaQPOffsetListLenMinus1 > 5 {
					return nil, fmt.Errorf("a chroma QP offset list of %d (6 at most)", p.chromaQPOffsetListLenMinus1+1)
				}
				for i := 0; i <= p.chromaQPOffsetListLenMinus1; i++ {
					p.cbQPOffsetList[i], p.crQPOffsetList[i] = r.SE(), r.SE()
				}
			}
			p.log2SAOOffsetScaleLuma, p.log2SAOOffsetScaleChroma = r.UE(), r.UE()
		}
	}
	return p, r.Err
}

// tileSizes fills the columns' and rows' sizes in CTBs (minus 1) for
// uniform spacing (6.5.1).
func (p *pps) tileSizes(s *sps) (cols, rows [21]int) {
	cols, rows = p.colWidthMinus1, p.rowHeightMinus1
	if !p.tiles {
		return
	}
	nc, nr := p.numTileColsMinus1+1, p.numTileRowsMinus1+1
	if p.uniformSpacing {
		for i := 0; i < nc && i < 21; i++ {
			cols[i] = ((i+1)*s.picWidthInCtbs)/nc - (i*s.picWidthInCtbs)/nc - 1
		}
		for i := 0; i < nr && i < 21; i++ {
			rows[i] = ((i+1)*s.picHeightInCtbs)/nr - (i*s.picHeightInCtbs)/nr - 1
		}
		return
	}
	// The last column and row take what is left.
	used := 0
	for i := 0; i < nc-1; i++ {
		used += cols[i] + 1
	}
	if nc-1 < 21 {
		cols[nc-1] = s.picWidthInCtbs - used - 1
	}
	used = 0
	for i := 0; i < nr-1; i++ {
		used += rows[i] + 1
	}
	if nr-1 < 21 {
		rows[nr-1] = s.picHeightInCtbs - used - 1
	}
	return
}
