// Package hevc reads an HEVC (H.265) Annex B stream's parameter sets and
// slice headers and keeps its decoded picture buffer, so that a decoder
// that takes one picture's parameters at a time (NVDEC's
// cuvidDecodePicture) can be fed without NVIDIA's parser: the parser cost
// about 103 µs of CPU a picture on the H200 (nodes/cuda/BENCHMARKS.md),
// two thirds of what decoding cost the process.
//
// It reads only what a hardware decoder needs: VPS, SPS and PPS, and each
// slice segment's header up to its data. The slice data is never copied:
// a Picture points into the access unit it came from.
//
// hevc must never import anything of onair's but internal/bitstream: cuda
// uses it, and it is checked against ffmpeg's trace_headers here, without
// a GPU.
package hevc

// Picture is one coded picture's parameters, in decoding order, in the
// shape of NVDEC's CUVIDPICPARAMS with CUVIDHEVCPICPARAMS (the field names
// are the specification's, as NVIDIA's are). Refs index the decoded
// picture buffer: RefPicIdx[i] is the surface of reference i (-1: none),
// PicOrderCntVal[i] its picture order count.
type Picture struct {
	// The access unit's slice segments: Data holds them as they came (with
	// their start codes), SliceOffsets where each starts in Data.
	Data         []byte
	SliceOffsets []uint32

	CurrPicIdx   int // the surface this picture decodes into
	RefPicFlag   bool
	IntraPicFlag bool // every slice is I
	// Output is whether the picture is shown (pic_output_flag and not a
	// RASL picture skipped after a random access).
	Output bool
	// POC is the picture's PicOrderCntVal; Index its place in decoding
	// order since the parser started.
	POC   int32
	Index int64

	// From the SPS.
	PicWidthInLumaSamples, PicHeightInLumaSamples int32
	Log2MinLumaCodingBlockSizeMinus3              uint8
	Log2DiffMaxMinLumaCodingBlockSize             uint8
	Log2MinTransformBlockSizeMinus2               uint8
	Log2DiffMaxMinTransformBlockSize              uint8
	PCMEnabledFlag                                uint8
	Log2MinPCMLumaCodingBlockSizeMinus3           uint8
	Log2DiffMaxMinPCMLumaCodingBlockSize          uint8
	PCMSampleBitDepthLumaMinus1                   uint8
	PCMSampleBitDepthChromaMinus1                 uint8
	PCMLoopFilterDisabledFlag                     uint8
	StrongIntraSmoothingEnabledFlag               uint8
	MaxTransformHierarchyDepthIntra               uint8
	MaxTransformHierarchyDepthInter               uint8
	AMPEnabledFlag                                uint8
	SeparateColourPlaneFlag                       uint8
	Log2MaxPicOrderCntLsbMinus4                   uint8
	NumShortTermRefPicSets                        uint8
	LongTermRefPicsPresentFlag                    uint8
	NumLongTermRefPicsSPS                         uint8
	SPSTemporalMVPEnabledFlag                     uint8
	SampleAdaptiveOffsetEnabledFlag               uint8
	ScalingListEnableFlag                         uint8
	IrapPicFlag                                   uint8
	IdrPicFlag                                    uint8
	BitDepthLumaMinus8                            uint8
	BitDepthChromaMinus8                          uint8
	ChromaFormatIDC                               uint8 // not in CUVIDHEVCPICPARAMS: the decoder's creation needs it

	// Range extensions (SPS and PPS).
	Log2MaxTransformSkipBlockSizeMinus2 uint8
	Log2SAOOffsetScaleLuma              uint8
	Log2SAOOffsetScaleChroma            uint8
	HighPrecisionOffsetsEnabledFlag     uint8
	SPSRangeExtensionFlag               uint8
	TransformSkipRotationEnabledFlag    uint8
	TransformSkipContextEnabledFlag     uint8
	ImplicitRDPCMEnabledFlag            uint8
	ExplicitRDPCMEnabledFlag            uint8
	ExtendedPrecisionProcessingFlag     uint8
	IntraSmoothingDisabledFlag          uint8
	PersistentRiceAdaptationEnabledFlag uint8
	CabacBypassAlignmentEnabledFlag     uint8
	PPSRangeExtensionFlag               uint8
	CrossComponentPredictionEnabledFlag uint8
	ChromaQPOffsetListEnabledFlag       uint8
	DiffCuChromaQPOffsetDepth           uint8
	ChromaQPOffsetListLenMinus1         uint8
	CbQPOffsetList, CrQPOffsetList      [6]int8

	// From the PPS.
	DependentSliceSegmentsEnabledFlag       uint8
	SliceSegmentHeaderExtensionPresentFlag  uint8
	SignDataHidingEnabledFlag               uint8
	CuQPDeltaEnabledFlag                    uint8
	DiffCuQPDeltaDepth                      uint8
	InitQPMinus26                           int8
	PPSCbQPOffset, PPSCrQPOffset            int8
	ConstrainedIntraPredFlag                uint8
	WeightedPredFlag, WeightedBipredFlag    uint8
	TransformSkipEnabledFlag                uint8
	TransquantBypassEnabledFlag             uint8
	EntropyCodingSyncEnabledFlag            uint8
	Log2ParallelMergeLevelMinus2            uint8
	NumExtraSliceHeaderBits                 uint8
	LoopFilterAcrossTilesEnabledFlag        uint8
	LoopFilterAcrossSlicesEnabledFlag       uint8
	OutputFlagPresentFlag                   uint8
	NumRefIdxL0DefaultActiveMinus1          uint8
	NumRefIdxL1DefaultActiveMinus1          uint8
	ListsModificationPresentFlag            uint8
	CabacInitPresentFlag                    uint8
	PPSSliceChromaQPOffsetsPresentFlag      uint8
	DeblockingFilterOverrideEnabledFlag     uint8
	PPSDeblockingFilterDisabledFlag         uint8
	PPSBetaOffsetDiv2, PPSTcOffsetDiv2      int8
	TilesEnabledFlag                        uint8
	UniformSpacingFlag                      uint8
	NumTileColumnsMinus1, NumTileRowsMinus1 uint8
	ColumnWidthMinus1, RowHeightMinus1      [21]uint16

	// The reference picture set of this picture.
	NumBitsForShortTermRPSInSlice int32
	NumDeltaPocsOfRefRpsIdx       int32
	NumPocTotalCurr               int32
	NumPocStCurrBefore            int32
	NumPocStCurrAfter             int32
	NumPocLtCurr                  int32
	CurrPicOrderCntVal            int32
	RefPicIdx                     [16]int32
	PicOrderCntVal                [16]int32
	IsLongTerm                    [16]uint8
	RefPicSetStCurrBefore         [8]uint8
	RefPicSetStCurrAfter          [8]uint8
	RefPicSetLtCurr               [8]uint8

	// Scaling lists in up-right diagonal scan order, as coded (the flat
	// 16s, or the specification's defaults, where the stream sends none).
	ScalingList4x4          [6][16]uint8
	ScalingList8x8          [6][64]uint8
	ScalingList16x16        [6][64]uint8
	ScalingList32x32        [2][64]uint8
	ScalingListDCCoeff16x16 [6]uint8
	ScalingListDCCoeff32x32 [2]uint8
}

// Display is a decoded picture to show, in output order: the surface it
// was decoded into, its picture order count, and the timestamp its access
// unit came with.
type Display struct {
	Surface   int
	POC       int32
	Timestamp int64
}

// Sequence is what creating a decoder needs, from the active SPS: the
// coded size (whole coding blocks), the display area inside it
// (conformance window, in luma samples), bit depth and chroma format, and
// how many pictures the decoded picture buffer holds at most
// (sps_max_dec_pic_buffering_minus1 + 1 of the highest sub-layer).
type Sequence struct {
	CodedWidth, CodedHeight  int
	Left, Top, Right, Bottom int // display area: [Left, Right) × [Top, Bottom)
	BitDepthLuma             int
	BitDepthChroma           int
	ChromaFormatIDC          int
	MaxDecPicBuffering       int
	MaxNumReorderPics        int
}
