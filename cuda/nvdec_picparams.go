package cuda

// The picture parameters of onair's HEVC parser (package hevc) in NVDEC's
// shape: a hevc.Picture written into a CUVIDPICPARAMS for
// cuvidDecodePicture, and one of NVIDIA's parser's read back into a
// hevc.Picture, to compare the two parsers picture by picture.

/*
#include "nvdec.h"
*/
import "C"

import (
	"unsafe"

	"github.com/onairhq/onair/cuda/hevc"
)

// nvdecCommon is the common part of CUVIDPICPARAMS that hevc.Picture does
// not hold as such: the coded size in 16×16 blocks and the field flags
// (HEVC pictures are frames).
type nvdecCommon struct {
	PicWidthInMbs, FrameHeightInMbs            int32
	FieldPicFlag, BottomFieldFlag, SecondField int32
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// fillPicParams writes p into pp, all but the bitstream and slice offsets
// (nvd_own_decode points pp at them for the call). Nothing is allocated.
func fillPicParams(pp *C.nvd_picparams, p *hevc.Picture) {
	pp.PicWidthInMbs = C.int((p.PicWidthInLumaSamples + 15) / 16)
	pp.FrameHeightInMbs = C.int((p.PicHeightInLumaSamples + 15) / 16)
	pp.CurrPicIdx = C.int(p.CurrPicIdx)
	pp.field_pic_flag, pp.bottom_field_flag, pp.second_field = 0, 0, 0
	pp.ref_pic_flag = boolInt(p.RefPicFlag)
	pp.intra_pic_flag = boolInt(p.IntraPicFlag)
	h := (*C.nvd_hevc_picparams)(unsafe.Pointer(&pp.CodecSpecific))
	h.pic_width_in_luma_samples = C.int(p.PicWidthInLumaSamples)
	h.pic_height_in_luma_samples = C.int(p.PicHeightInLumaSamples)
	h.log2_min_luma_coding_block_size_minus3 = C.uchar(p.Log2MinLumaCodingBlockSizeMinus3)
	h.log2_diff_max_min_luma_coding_block_size = C.uchar(p.Log2DiffMaxMinLumaCodingBlockSize)
	h.log2_min_transform_block_size_minus2 = C.uchar(p.Log2MinTransformBlockSizeMinus2)
	h.log2_diff_max_min_transform_block_size = C.uchar(p.Log2DiffMaxMinTransformBlockSize)
	h.pcm_enabled_flag = C.uchar(p.PCMEnabledFlag)
	h.log2_min_pcm_luma_coding_block_size_minus3 = C.uchar(p.Log2MinPCMLumaCodingBlockSizeMinus3)
	h.log2_diff_max_min_pcm_luma_coding_block_size = C.uchar(p.Log2DiffMaxMinPCMLumaCodingBlockSize)
	h.pcm_sample_bit_depth_luma_minus1 = C.uchar(p.PCMSampleBitDepthLumaMinus1)
	h.pcm_sample_bit_depth_chroma_minus1 = C.uchar(p.PCMSampleBitDepthChromaMinus1)
	h.pcm_loop_filter_disabled_flag = C.uchar(p.PCMLoopFilterDisabledFlag)
	h.strong_intra_smoothing_enabled_flag = C.uchar(p.StrongIntraSmoothingEnabledFlag)
	h.max_transform_hierarchy_depth_intra = C.uchar(p.MaxTransformHierarchyDepthIntra)
	h.max_transform_hierarchy_depth_inter = C.uchar(p.MaxTransformHierarchyDepthInter)
	h.amp_enabled_flag = C.uchar(p.AMPEnabledFlag)
	h.separate_colour_plane_flag = C.uchar(p.SeparateColourPlaneFlag)
	h.log2_max_pic_order_cnt_lsb_minus4 = C.uchar(p.Log2MaxPicOrderCntLsbMinus4)
	h.num_short_term_ref_pic_sets = C.uchar(p.NumShortTermRefPicSets)
	h.long_term_ref_pics_present_flag = C.uchar(p.LongTermRefPicsPresentFlag)
	h.num_long_term_ref_pics_sps = C.uchar(p.NumLongTermRefPicsSPS)
	h.sps_temporal_mvp_enabled_flag = C.uchar(p.SPSTemporalMVPEnabledFlag)
	h.sample_adaptive_offset_enabled_flag = C.uchar(p.SampleAdaptiveOffsetEnabledFlag)
	h.scaling_list_enable_flag = C.uchar(p.ScalingListEnableFlag)
	h.IrapPicFlag = C.uchar(p.IrapPicFlag)
	h.IdrPicFlag = C.uchar(p.IdrPicFlag)
	h.bit_depth_luma_minus8 = C.uchar(p.BitDepthLumaMinus8)
	h.bit_depth_chroma_minus8 = C.uchar(p.BitDepthChromaMinus8)
	h.log2_max_transform_skip_block_size_minus2 = C.uchar(p.Log2MaxTransformSkipBlockSizeMinus2)
	h.log2_sao_offset_scale_luma = C.uchar(p.Log2SAOOffsetScaleLuma)
	h.log2_sao_offset_scale_chroma = C.uchar(p.Log2SAOOffsetScaleChroma)
	h.high_precision_offsets_enabled_flag = C.uchar(p.HighPrecisionOffsetsEnabledFlag)
	h.dependent_slice_segments_enabled_flag = C.uchar(p.DependentSliceSegmentsEnabledFlag)
	h.slice_segment_header_extension_present_flag = C.uchar(p.SliceSegmentHeaderExtensionPresentFlag)
	h.sign_data_hiding_enabled_flag = C.uchar(p.SignDataHidingEnabledFlag)
	h.cu_qp_delta_enabled_flag = C.uchar(p.CuQPDeltaEnabledFlag)
	h.diff_cu_qp_delta_depth = C.uchar(p.DiffCuQPDeltaDepth)
	h.init_qp_minus26 = C.schar(p.InitQPMinus26)
	h.pps_cb_qp_offset = C.schar(p.PPSCbQPOffset)
	h.pps_cr_qp_offset = C.schar(p.PPSCrQPOffset)
	h.constrained_intra_pred_flag = C.uchar(p.ConstrainedIntraPredFlag)
	h.weighted_pred_flag = C.uchar(p.WeightedPredFlag)
	h.weighted_bipred_flag = C.uchar(p.WeightedBipredFlag)
	h.transform_skip_enabled_flag = C.uchar(p.TransformSkipEnabledFlag)
	h.transquant_bypass_enabled_flag = C.uchar(p.TransquantBypassEnabledFlag)
	h.entropy_coding_sync_enabled_flag = C.uchar(p.EntropyCodingSyncEnabledFlag)
	h.log2_parallel_merge_level_minus2 = C.uchar(p.Log2ParallelMergeLevelMinus2)
	h.num_extra_slice_header_bits = C.uchar(p.NumExtraSliceHeaderBits)
	h.loop_filter_across_tiles_enabled_flag = C.uchar(p.LoopFilterAcrossTilesEnabledFlag)
	h.loop_filter_across_slices_enabled_flag = C.uchar(p.LoopFilterAcrossSlicesEnabledFlag)
	h.output_flag_present_flag = C.uchar(p.OutputFlagPresentFlag)
	h.num_ref_idx_l0_default_active_minus1 = C.uchar(p.NumRefIdxL0DefaultActiveMinus1)
	h.num_ref_idx_l1_default_active_minus1 = C.uchar(p.NumRefIdxL1DefaultActiveMinus1)
	h.lists_modification_present_flag = C.uchar(p.ListsModificationPresentFlag)
	h.cabac_init_present_flag = C.uchar(p.CabacInitPresentFlag)
	h.pps_slice_chroma_qp_offsets_present_flag = C.uchar(p.PPSSliceChromaQPOffsetsPresentFlag)
	h.deblocking_filter_override_enabled_flag = C.uchar(p.DeblockingFilterOverrideEnabledFlag)
	h.pps_deblocking_filter_disabled_flag = C.uchar(p.PPSDeblockingFilterDisabledFlag)
	h.pps_beta_offset_div2 = C.schar(p.PPSBetaOffsetDiv2)
	h.pps_tc_offset_div2 = C.schar(p.PPSTcOffsetDiv2)
	h.tiles_enabled_flag = C.uchar(p.TilesEnabledFlag)
	h.uniform_spacing_flag = C.uchar(p.UniformSpacingFlag)
	h.num_tile_columns_minus1 = C.uchar(p.NumTileColumnsMinus1)
	h.num_tile_rows_minus1 = C.uchar(p.NumTileRowsMinus1)
	*(*[21]uint16)(unsafe.Pointer(&h.column_width_minus1)) = p.ColumnWidthMinus1
	*(*[21]uint16)(unsafe.Pointer(&h.row_height_minus1)) = p.RowHeightMinus1
	h.sps_range_extension_flag = C.uchar(p.SPSRangeExtensionFlag)
	h.transform_skip_rotation_enabled_flag = C.uchar(p.TransformSkipRotationEnabledFlag)
	h.transform_skip_context_enabled_flag = C.uchar(p.TransformSkipContextEnabledFlag)
	h.implicit_rdpcm_enabled_flag = C.uchar(p.ImplicitRDPCMEnabledFlag)
	h.explicit_rdpcm_enabled_flag = C.uchar(p.ExplicitRDPCMEnabledFlag)
	h.extended_precision_processing_flag = C.uchar(p.ExtendedPrecisionProcessingFlag)
	h.intra_smoothing_disabled_flag = C.uchar(p.IntraSmoothingDisabledFlag)
	h.persistent_rice_adaptation_enabled_flag = C.uchar(p.PersistentRiceAdaptationEnabledFlag)
	h.cabac_bypass_alignment_enabled_flag = C.uchar(p.CabacBypassAlignmentEnabledFlag)
	h.pps_range_extension_flag = C.uchar(p.PPSRangeExtensionFlag)
	h.cross_component_prediction_enabled_flag = C.uchar(p.CrossComponentPredictionEnabledFlag)
	h.chroma_qp_offset_list_enabled_flag = C.uchar(p.ChromaQPOffsetListEnabledFlag)
	h.diff_cu_chroma_qp_offset_depth = C.uchar(p.DiffCuChromaQPOffsetDepth)
	h.chroma_qp_offset_list_len_minus1 = C.uchar(p.ChromaQPOffsetListLenMinus1)
	*(*[6]int8)(unsafe.Pointer(&h.cb_qp_offset_list)) = p.CbQPOffsetList
	*(*[6]int8)(unsafe.Pointer(&h.cr_qp_offset_list)) = p.CrQPOffsetList
	h.NumBitsForShortTermRPSInSlice = C.int(p.NumBitsForShortTermRPSInSlice)
	h.NumDeltaPocsOfRefRpsIdx = C.int(p.NumDeltaPocsOfRefRpsIdx)
	h.NumPocTotalCurr = C.int(p.NumPocTotalCurr)
	h.NumPocStCurrBefore = C.int(p.NumPocStCurrBefore)
	h.NumPocStCurrAfter = C.int(p.NumPocStCurrAfter)
	h.NumPocLtCurr = C.int(p.NumPocLtCurr)
	h.CurrPicOrderCntVal = C.int(p.CurrPicOrderCntVal)
	*(*[16]int32)(unsafe.Pointer(&h.RefPicIdx)) = p.RefPicIdx
	*(*[16]int32)(unsafe.Pointer(&h.PicOrderCntVal)) = p.PicOrderCntVal
	*(*[16]uint8)(unsafe.Pointer(&h.IsLongTerm)) = p.IsLongTerm
	*(*[8]uint8)(unsafe.Pointer(&h.RefPicSetStCurrBefore)) = p.RefPicSetStCurrBefore
	*(*[8]uint8)(unsafe.Pointer(&h.RefPicSetStCurrAfter)) = p.RefPicSetStCurrAfter
	*(*[8]uint8)(unsafe.Pointer(&h.RefPicSetLtCurr)) = p.RefPicSetLtCurr
	*(*[6][16]uint8)(unsafe.Pointer(&h.ScalingList4x4)) = p.ScalingList4x4
	*(*[6][64]uint8)(unsafe.Pointer(&h.ScalingList8x8)) = p.ScalingList8x8
	*(*[6][64]uint8)(unsafe.Pointer(&h.ScalingList16x16)) = p.ScalingList16x16
	*(*[2][64]uint8)(unsafe.Pointer(&h.ScalingList32x32)) = p.ScalingList32x32
	*(*[6]uint8)(unsafe.Pointer(&h.ScalingListDCCoeff16x16)) = p.ScalingListDCCoeff16x16
	*(*[2]uint8)(unsafe.Pointer(&h.ScalingListDCCoeff32x32)) = p.ScalingListDCCoeff32x32
}

// readPicParams reads HEVC picture parameters back into a hevc.Picture,
// its bitstream and slice offsets copied (pp's point at C memory that
// lives as long as pp does). POC is CurrPicOrderCntVal; Output, Index and
// ChromaFormatIDC are not in CUVIDPICPARAMS and stay zero.
func readPicParams(pp *C.nvd_picparams) (*hevc.Picture, nvdecCommon) {
	p := &hevc.Picture{}
	c := nvdecCommon{
		PicWidthInMbs: int32(pp.PicWidthInMbs), FrameHeightInMbs: int32(pp.FrameHeightInMbs),
		FieldPicFlag: int32(pp.field_pic_flag), BottomFieldFlag: int32(pp.bottom_field_flag), SecondField: int32(pp.second_field),
	}
	if n := int(pp.nBitstreamDataLen); n > 0 && pp.pBitstreamData != nil {
		p.Data = C.GoBytes(unsafe.Pointer(pp.pBitstreamData), C.int(n))
	}
	if n := int(pp.nNumSlices); n > 0 && pp.pSliceDataOffsets != nil {
		p.SliceOffsets = make([]uint32, n)
		copy(p.SliceOffsets, unsafe.Slice((*uint32)(unsafe.Pointer(pp.pSliceDataOffsets)), n))
	}
	p.CurrPicIdx = int(pp.CurrPicIdx)
	p.RefPicFlag = pp.ref_pic_flag != 0
	p.IntraPicFlag = pp.intra_pic_flag != 0
	h := (*C.nvd_hevc_picparams)(unsafe.Pointer(&pp.CodecSpecific))
	p.PicWidthInLumaSamples = int32(h.pic_width_in_luma_samples)
	p.PicHeightInLumaSamples = int32(h.pic_height_in_luma_samples)
	p.Log2MinLumaCodingBlockSizeMinus3 = uint8(h.log2_min_luma_coding_block_size_minus3)
	p.Log2DiffMaxMinLumaCodingBlockSize = uint8(h.log2_diff_max_min_luma_coding_block_size)
	p.Log2MinTransformBlockSizeMinus2 = uint8(h.log2_min_transform_block_size_minus2)
	p.Log2DiffMaxMinTransformBlockSize = uint8(h.log2_diff_max_min_transform_block_size)
	p.PCMEnabledFlag = uint8(h.pcm_enabled_flag)
	p.Log2MinPCMLumaCodingBlockSizeMinus3 = uint8(h.log2_min_pcm_luma_coding_block_size_minus3)
	p.Log2DiffMaxMinPCMLumaCodingBlockSize = uint8(h.log2_diff_max_min_pcm_luma_coding_block_size)
	p.PCMSampleBitDepthLumaMinus1 = uint8(h.pcm_sample_bit_depth_luma_minus1)
	p.PCMSampleBitDepthChromaMinus1 = uint8(h.pcm_sample_bit_depth_chroma_minus1)
	p.PCMLoopFilterDisabledFlag = uint8(h.pcm_loop_filter_disabled_flag)
	p.StrongIntraSmoothingEnabledFlag = uint8(h.strong_intra_smoothing_enabled_flag)
	p.MaxTransformHierarchyDepthIntra = uint8(h.max_transform_hierarchy_depth_intra)
	p.MaxTransformHierarchyDepthInter = uint8(h.max_transform_hierarchy_depth_inter)
	p.AMPEnabledFlag = uint8(h.amp_enabled_flag)
	p.SeparateColourPlaneFlag = uint8(h.separate_colour_plane_flag)
	p.Log2MaxPicOrderCntLsbMinus4 = uint8(h.log2_max_pic_order_cnt_lsb_minus4)
	p.NumShortTermRefPicSets = uint8(h.num_short_term_ref_pic_sets)
	p.LongTermRefPicsPresentFlag = uint8(h.long_term_ref_pics_present_flag)
	p.NumLongTermRefPicsSPS = uint8(h.num_long_term_ref_pics_sps)
	p.SPSTemporalMVPEnabledFlag = uint8(h.sps_temporal_mvp_enabled_flag)
	p.SampleAdaptiveOffsetEnabledFlag = uint8(h.sample_adaptive_offset_enabled_flag)
	p.ScalingListEnableFlag = uint8(h.scaling_list_enable_flag)
	p.IrapPicFlag = uint8(h.IrapPicFlag)
	p.IdrPicFlag = uint8(h.IdrPicFlag)
	p.BitDepthLumaMinus8 = uint8(h.bit_depth_luma_minus8)
	p.BitDepthChromaMinus8 = uint8(h.bit_depth_chroma_minus8)
	p.Log2MaxTransformSkipBlockSizeMinus2 = uint8(h.log2_max_transform_skip_block_size_minus2)
	p.Log2SAOOffsetScaleLuma = uint8(h.log2_sao_offset_scale_luma)
	p.Log2SAOOffsetScaleChroma = uint8(h.log2_sao_offset_scale_chroma)
	p.HighPrecisionOffsetsEnabledFlag = uint8(h.high_precision_offsets_enabled_flag)
	p.DependentSliceSegmentsEnabledFlag = uint8(h.dependent_slice_segments_enabled_flag)
	p.SliceSegmentHeaderExtensionPresentFlag = uint8(h.slice_segment_header_extension_present_flag)
	p.SignDataHidingEnabledFlag = uint8(h.sign_data_hiding_enabled_flag)
	p.CuQPDeltaEnabledFlag = uint8(h.cu_qp_delta_enabled_flag)
	p.DiffCuQPDeltaDepth = uint8(h.diff_cu_qp_delta_depth)
	p.InitQPMinus26 = int8(h.init_qp_minus26)
	p.PPSCbQPOffset = int8(h.pps_cb_qp_offset)
	p.PPSCrQPOffset = int8(h.pps_cr_qp_offset)
	p.ConstrainedIntraPredFlag = uint8(h.constrained_intra_pred_flag)
	p.WeightedPredFlag = uint8(h.weighted_pred_flag)
	p.WeightedBipredFlag = uint8(h.weighted_bipred_flag)
	p.TransformSkipEnabledFlag = uint8(h.transform_skip_enabled_flag)
	p.TransquantBypassEnabledFlag = uint8(h.transquant_bypass_enabled_flag)
	p.EntropyCodingSyncEnabledFlag = uint8(h.entropy_coding_sync_enabled_flag)
	p.Log2ParallelMergeLevelMinus2 = uint8(h.log2_parallel_merge_level_minus2)
	p.NumExtraSliceHeaderBits = uint8(h.num_extra_slice_header_bits)
	p.LoopFilterAcrossTilesEnabledFlag = uint8(h.loop_filter_across_tiles_enabled_flag)
	p.LoopFilterAcrossSlicesEnabledFlag = uint8(h.loop_filter_across_slices_enabled_flag)
	p.OutputFlagPresentFlag = uint8(h.output_flag_present_flag)
	p.NumRefIdxL0DefaultActiveMinus1 = uint8(h.num_ref_idx_l0_default_active_minus1)
	p.NumRefIdxL1DefaultActiveMinus1 = uint8(h.num_ref_idx_l1_default_active_minus1)
	p.ListsModificationPresentFlag = uint8(h.lists_modification_present_flag)
	p.CabacInitPresentFlag = uint8(h.cabac_init_present_flag)
	p.PPSSliceChromaQPOffsetsPresentFlag = uint8(h.pps_slice_chroma_qp_offsets_present_flag)
	p.DeblockingFilterOverrideEnabledFlag = uint8(h.deblocking_filter_override_enabled_flag)
	p.PPSDeblockingFilterDisabledFlag = uint8(h.pps_deblocking_filter_disabled_flag)
	p.PPSBetaOffsetDiv2 = int8(h.pps_beta_offset_div2)
	p.PPSTcOffsetDiv2 = int8(h.pps_tc_offset_div2)
	p.TilesEnabledFlag = uint8(h.tiles_enabled_flag)
	p.UniformSpacingFlag = uint8(h.uniform_spacing_flag)
	p.NumTileColumnsMinus1 = uint8(h.num_tile_columns_minus1)
	p.NumTileRowsMinus1 = uint8(h.num_tile_rows_minus1)
	p.ColumnWidthMinus1 = *(*[21]uint16)(unsafe.Pointer(&h.column_width_minus1))
	p.RowHeightMinus1 = *(*[21]uint16)(unsafe.Pointer(&h.row_height_minus1))
	p.SPSRangeExtensionFlag = uint8(h.sps_range_extension_flag)
	p.TransformSkipRotationEnabledFlag = uint8(h.transform_skip_rotation_enabled_flag)
	p.TransformSkipContextEnabledFlag = uint8(h.transform_skip_context_enabled_flag)
	p.ImplicitRDPCMEnabledFlag = uint8(h.implicit_rdpcm_enabled_flag)
	p.ExplicitRDPCMEnabledFlag = uint8(h.explicit_rdpcm_enabled_flag)
	p.ExtendedPrecisionProcessingFlag = uint8(h.extended_precision_processing_flag)
	p.IntraSmoothingDisabledFlag = uint8(h.intra_smoothing_disabled_flag)
	p.PersistentRiceAdaptationEnabledFlag = uint8(h.persistent_rice_adaptation_enabled_flag)
	p.CabacBypassAlignmentEnabledFlag = uint8(h.cabac_bypass_alignment_enabled_flag)
	p.PPSRangeExtensionFlag = uint8(h.pps_range_extension_flag)
	p.CrossComponentPredictionEnabledFlag = uint8(h.cross_component_prediction_enabled_flag)
	p.ChromaQPOffsetListEnabledFlag = uint8(h.chroma_qp_offset_list_enabled_flag)
	p.DiffCuChromaQPOffsetDepth = uint8(h.diff_cu_chroma_qp_offset_depth)
	p.ChromaQPOffsetListLenMinus1 = uint8(h.chroma_qp_offset_list_len_minus1)
	p.CbQPOffsetList = *(*[6]int8)(unsafe.Pointer(&h.cb_qp_offset_list))
	p.CrQPOffsetList = *(*[6]int8)(unsafe.Pointer(&h.cr_qp_offset_list))
	p.NumBitsForShortTermRPSInSlice = int32(h.NumBitsForShortTermRPSInSlice)
	p.NumDeltaPocsOfRefRpsIdx = int32(h.NumDeltaPocsOfRefRpsIdx)
	p.NumPocTotalCurr = int32(h.NumPocTotalCurr)
	p.NumPocStCurrBefore = int32(h.NumPocStCurrBefore)
	p.NumPocStCurrAfter = int32(h.NumPocStCurrAfter)
	p.NumPocLtCurr = int32(h.NumPocLtCurr)
	p.CurrPicOrderCntVal = int32(h.CurrPicOrderCntVal)
	p.RefPicIdx = *(*[16]int32)(unsafe.Pointer(&h.RefPicIdx))
	p.PicOrderCntVal = *(*[16]int32)(unsafe.Pointer(&h.PicOrderCntVal))
	p.IsLongTerm = *(*[16]uint8)(unsafe.Pointer(&h.IsLongTerm))
	p.RefPicSetStCurrBefore = *(*[8]uint8)(unsafe.Pointer(&h.RefPicSetStCurrBefore))
	p.RefPicSetStCurrAfter = *(*[8]uint8)(unsafe.Pointer(&h.RefPicSetStCurrAfter))
	p.RefPicSetLtCurr = *(*[8]uint8)(unsafe.Pointer(&h.RefPicSetLtCurr))
	p.ScalingList4x4 = *(*[6][16]uint8)(unsafe.Pointer(&h.ScalingList4x4))
	p.ScalingList8x8 = *(*[6][64]uint8)(unsafe.Pointer(&h.ScalingList8x8))
	p.ScalingList16x16 = *(*[6][64]uint8)(unsafe.Pointer(&h.ScalingList16x16))
	p.ScalingList32x32 = *(*[2][64]uint8)(unsafe.Pointer(&h.ScalingList32x32))
	p.ScalingListDCCoeff16x16 = *(*[6]uint8)(unsafe.Pointer(&h.ScalingListDCCoeff16x16))
	p.ScalingListDCCoeff32x32 = *(*[2]uint8)(unsafe.Pointer(&h.ScalingListDCCoeff32x32))
	p.POC = p.CurrPicOrderCntVal
	return p, c
}

// nvdecField is a field of our declarations: its C name, offset and size.
type nvdecField struct {
	Name         string
	Offset, Size int
}

// nvdecPicLayout is our declarations' CUVIDPICPARAMS and
// CUVIDHEVCPICPARAMS, field by field, with their sizes.
func nvdecPicLayout() (pic, hevcPic []nvdecField, picSize, hevcSize int) {
	read := func(hevc C.int) []nvdecField {
		var n C.int
		t := C.nvd_layout(hevc, &n)
		var fs []nvdecField
		for _, f := range unsafe.Slice(t, int(n)) {
			fs = append(fs, nvdecField{C.GoString(f.name), int(f.offset), int(f.size)})
		}
		return fs
	}
	return read(0), read(1), int(C.sizeof_nvd_picparams), int(C.sizeof_nvd_hevc_picparams)
}

// picParamsRoundTrip fills a C CUVIDPICPARAMS from p (bitstream and slices
// included, in C memory) and reads it back: what the decoder is handed, as
// a hevc.Picture. For the tests.
func picParamsRoundTrip(p *hevc.Picture) (*hevc.Picture, nvdecCommon) {
	pp := (*C.nvd_picparams)(C.calloc(1, C.sizeof_nvd_picparams))
	defer C.free(unsafe.Pointer(pp))
	fillPicParams(pp, p)
	if len(p.Data) > 0 {
		pp.pBitstreamData = (*C.uchar)(C.CBytes(p.Data))
		defer C.free(unsafe.Pointer(pp.pBitstreamData))
		pp.nBitstreamDataLen = C.uint(len(p.Data))
	}
	if len(p.SliceOffsets) > 0 {
		o := (*C.uint)(C.malloc(C.size_t(4 * len(p.SliceOffsets))))
		defer C.free(unsafe.Pointer(o))
		copy(unsafe.Slice((*uint32)(unsafe.Pointer(o)), len(p.SliceOffsets)), p.SliceOffsets)
		pp.pSliceDataOffsets, pp.nNumSlices = o, C.uint(len(p.SliceOffsets))
	}
	return readPicParams(pp)
}
