// NVDEC through libnvcuvid.so.1, loaded with dlopen: a table of the cuvid
// entry points only. Every CUDA driver call decoding makes (making the
// context current, the plane copies, the copy kernel's launch) goes through
// the one loader's table (driver.h's onair_cu) on the Context NVDEC was
// opened on.
//
// The types below are onair's own declarations of the layouts NVIDIA
// documents for the NVDEC API (nvcuvid.h, cuviddec.h), for 64-bit Linux
// (unsigned long and pointers of 8 bytes). The _Static_asserts pin the
// offsets and sizes those layouts give, so a slip in a declaration fails
// the build rather than a decode.
//
// The parser's callbacks are C (no call back into Go): the sequence
// callback checks the stream against the decoder's capabilities and what
// the source declared and creates the decoder; the decode callback hands
// the picture to the engine; the display callback queues the picture for
// the decode loop, which maps, copies and unmaps it after the parse call
// returns.

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h"     // the loader's table (onair_cu) and the 2D copy descriptor (onair_copy2d)
#include "compositor.h" // the plane copies' kernel argument (onair_copy128_args)

typedef int nvd_result; // CUresult: 0 is success

// ---- NVDEC API ----------------------------------------------------------

enum { NVD_CODEC_H264 = 4, NVD_CODEC_HEVC = 8 };              // cudaVideoCodec
enum { NVD_SURFACE_NV12 = 0, NVD_SURFACE_P016 = 1 };         // cudaVideoSurfaceFormat
enum { NVD_CHROMA_420 = 1 };                                 // cudaVideoChromaFormat
enum { NVD_CREATE_PREFER_CUVID = 4 };                        // cudaVideoCreateFlags
enum { NVD_DEINTERLACE_WEAVE = 0 };                          // cudaVideoDeinterlaceMode
enum { NVD_PKT_ENDOFSTREAM = 1, NVD_PKT_TIMESTAMP = 2, NVD_PKT_ENDOFPICTURE = 8, NVD_PKT_NOTIFY_EOS = 16 };
enum { NVD_STATUS_IN_PROGRESS = 1, NVD_STATUS_SUCCESS = 2, NVD_STATUS_ERROR = 8, NVD_STATUS_CONCEALED = 9 };

typedef struct {
	int codec;
	unsigned int rate_num, rate_den;
	unsigned char progressive, depth_luma_minus8, depth_chroma_minus8, min_surfaces;
	unsigned int coded_width, coded_height;
	int left, top, right, bottom; // the display area
	int chroma_format;
	unsigned int bitrate;
	int aspect_x, aspect_y;
	unsigned char signal[4]; // video_signal_description
	unsigned int seqhdr_length;
} nvd_format; // CUVIDEOFORMAT

_Static_assert(offsetof(nvd_format, coded_width) == 16, "CUVIDEOFORMAT");
_Static_assert(offsetof(nvd_format, left) == 24, "CUVIDEOFORMAT");
_Static_assert(offsetof(nvd_format, chroma_format) == 40, "CUVIDEOFORMAT");
_Static_assert(sizeof(nvd_format) == 64, "CUVIDEOFORMAT");

typedef struct {
	int picture_index;
	int progressive_frame;
	int top_field_first;
	int repeat_first_field;
	long long timestamp;
} nvd_dispinfo; // CUVIDPARSERDISPINFO

_Static_assert(sizeof(nvd_dispinfo) == 24, "CUVIDPARSERDISPINFO");

typedef struct {
	unsigned long flags;
	unsigned long payload_size;
	const unsigned char *payload;
	long long timestamp;
} nvd_packet; // CUVIDSOURCEDATAPACKET

_Static_assert(sizeof(nvd_packet) == 32, "CUVIDSOURCEDATAPACKET");

typedef int (*nvd_seq_fn)(void *, nvd_format *);
typedef int (*nvd_decode_fn)(void *, void *); // a CUVIDPICPARAMS (nvd_picparams, below)
typedef int (*nvd_display_fn)(void *, nvd_dispinfo *);

typedef struct {
	int codec;
	unsigned int max_surfaces;
	unsigned int clock_rate;
	unsigned int error_threshold;
	unsigned int max_display_delay;
	unsigned int flags_bits; // bAnnexb:1, reserved:31
	unsigned int reserved1[4];
	void *user;
	nvd_seq_fn on_sequence;
	nvd_decode_fn on_decode;
	nvd_display_fn on_display;
	void *on_operating_point;
	void *reserved2[6];
	void *ext_video_info;
} nvd_parser_params; // CUVIDPARSERPARAMS

_Static_assert(offsetof(nvd_parser_params, user) == 40, "CUVIDPARSERPARAMS");
_Static_assert(offsetof(nvd_parser_params, on_display) == 64, "CUVIDPARSERPARAMS");
_Static_assert(offsetof(nvd_parser_params, ext_video_info) == 128, "CUVIDPARSERPARAMS");
_Static_assert(sizeof(nvd_parser_params) == 136, "CUVIDPARSERPARAMS");

typedef struct {
	int codec;
	int chroma_format;
	unsigned int depth_minus8;
	unsigned int reserved1[3];
	unsigned char supported;
	unsigned char engines;
	unsigned short output_formats; // a bit per cudaVideoSurfaceFormat
	unsigned int max_width, max_height, max_mb_count;
	unsigned short min_width, min_height;
	unsigned char histogram, histogram_depth;
	unsigned short histogram_bins;
	unsigned int reserved3[10];
} nvd_caps; // CUVIDDECODECAPS

_Static_assert(offsetof(nvd_caps, supported) == 24, "CUVIDDECODECAPS");
_Static_assert(offsetof(nvd_caps, max_width) == 28, "CUVIDDECODECAPS");
_Static_assert(offsetof(nvd_caps, min_width) == 40, "CUVIDDECODECAPS");
_Static_assert(sizeof(nvd_caps) == 88, "CUVIDDECODECAPS");

typedef struct { short left, top, right, bottom; } nvd_rect16;

typedef struct {
	unsigned long width, height;
	unsigned long num_decode_surfaces;
	int codec;
	int chroma_format;
	unsigned long creation_flags;
	unsigned long depth_minus8;
	unsigned long intra_decode_only;
	unsigned long max_width, max_height;
	unsigned long reserved1;
	nvd_rect16 display_area;
	int output_format;
	int deinterlace_mode;
	unsigned long target_width, target_height;
	unsigned long num_output_surfaces;
	void *vid_lock;
	nvd_rect16 target_rect;
	unsigned long enable_histogram;
	unsigned long reserved2[4];
} nvd_create_info; // CUVIDDECODECREATEINFO

_Static_assert(offsetof(nvd_create_info, codec) == 24, "CUVIDDECODECREATEINFO");
_Static_assert(offsetof(nvd_create_info, display_area) == 80, "CUVIDDECODECREATEINFO");
_Static_assert(offsetof(nvd_create_info, output_format) == 88, "CUVIDDECODECREATEINFO");
_Static_assert(offsetof(nvd_create_info, target_width) == 96, "CUVIDDECODECREATEINFO");
_Static_assert(offsetof(nvd_create_info, vid_lock) == 120, "CUVIDDECODECREATEINFO");
_Static_assert(offsetof(nvd_create_info, target_rect) == 128, "CUVIDDECODECREATEINFO");
_Static_assert(sizeof(nvd_create_info) == 176, "CUVIDDECODECREATEINFO");

typedef struct {
	int progressive_frame, second_field, top_field_first, unpaired_field;
	unsigned int reserved_flags, reserved_zero;
	unsigned long long raw_input_dptr;
	unsigned int raw_input_pitch, raw_input_format;
	unsigned long long raw_output_dptr;
	unsigned int raw_output_pitch, reserved1;
	void *output_stream;
	unsigned int reserved[46];
	unsigned long long *histogram_dptr;
	void *reserved2[1];
} nvd_proc_params; // CUVIDPROCPARAMS

_Static_assert(offsetof(nvd_proc_params, output_stream) == 56, "CUVIDPROCPARAMS");
_Static_assert(offsetof(nvd_proc_params, histogram_dptr) == 248, "CUVIDPROCPARAMS");
_Static_assert(sizeof(nvd_proc_params) == 264, "CUVIDPROCPARAMS");

typedef struct {
	int status;
	unsigned int reserved[31];
	void *preserved[8];
} nvd_decode_status; // CUVIDGETDECODESTATUS

_Static_assert(sizeof(nvd_decode_status) == 192, "CUVIDGETDECODESTATUS");

// The picture parameters cuvidDecodePicture takes: the common part, then
// the codec's own in a union of 4 KiB. Only HEVC's are declared (onair's
// own HEVC parser fills them, cuda/hevc); H.264's stay NVIDIA's parser's
// business. The field names are NVIDIA's (the specification's), so that a
// check against NVIDIA's header can go name by name (nvdec_layout_test.go).

typedef struct {
	int pic_width_in_luma_samples;
	int pic_height_in_luma_samples;
	unsigned char log2_min_luma_coding_block_size_minus3;
	unsigned char log2_diff_max_min_luma_coding_block_size;
	unsigned char log2_min_transform_block_size_minus2;
	unsigned char log2_diff_max_min_transform_block_size;
	unsigned char pcm_enabled_flag;
	unsigned char log2_min_pcm_luma_coding_block_size_minus3;
	unsigned char log2_diff_max_min_pcm_luma_coding_block_size;
	unsigned char pcm_sample_bit_depth_luma_minus1;
	unsigned char pcm_sample_bit_depth_chroma_minus1;
	unsigned char pcm_loop_filter_disabled_flag;
	unsigned char strong_intra_smoothing_enabled_flag;
	unsigned char max_transform_hierarchy_depth_intra;
	unsigned char max_transform_hierarchy_depth_inter;
	unsigned char amp_enabled_flag;
	unsigned char separate_colour_plane_flag;
	unsigned char log2_max_pic_order_cnt_lsb_minus4;
	unsigned char num_short_term_ref_pic_sets;
	unsigned char long_term_ref_pics_present_flag;
	unsigned char num_long_term_ref_pics_sps;
	unsigned char sps_temporal_mvp_enabled_flag;
	unsigned char sample_adaptive_offset_enabled_flag;
	unsigned char scaling_list_enable_flag;
	unsigned char IrapPicFlag;
	unsigned char IdrPicFlag;
	unsigned char bit_depth_luma_minus8;
	unsigned char bit_depth_chroma_minus8;
	unsigned char log2_max_transform_skip_block_size_minus2;
	unsigned char log2_sao_offset_scale_luma;
	unsigned char log2_sao_offset_scale_chroma;
	unsigned char high_precision_offsets_enabled_flag;
	unsigned char reserved1[10];
	unsigned char dependent_slice_segments_enabled_flag;
	unsigned char slice_segment_header_extension_present_flag;
	unsigned char sign_data_hiding_enabled_flag;
	unsigned char cu_qp_delta_enabled_flag;
	unsigned char diff_cu_qp_delta_depth;
	signed char init_qp_minus26;
	signed char pps_cb_qp_offset;
	signed char pps_cr_qp_offset;
	unsigned char constrained_intra_pred_flag;
	unsigned char weighted_pred_flag;
	unsigned char weighted_bipred_flag;
	unsigned char transform_skip_enabled_flag;
	unsigned char transquant_bypass_enabled_flag;
	unsigned char entropy_coding_sync_enabled_flag;
	unsigned char log2_parallel_merge_level_minus2;
	unsigned char num_extra_slice_header_bits;
	unsigned char loop_filter_across_tiles_enabled_flag;
	unsigned char loop_filter_across_slices_enabled_flag;
	unsigned char output_flag_present_flag;
	unsigned char num_ref_idx_l0_default_active_minus1;
	unsigned char num_ref_idx_l1_default_active_minus1;
	unsigned char lists_modification_present_flag;
	unsigned char cabac_init_present_flag;
	unsigned char pps_slice_chroma_qp_offsets_present_flag;
	unsigned char deblocking_filter_override_enabled_flag;
	unsigned char pps_deblocking_filter_disabled_flag;
	signed char pps_beta_offset_div2;
	signed char pps_tc_offset_div2;
	unsigned char tiles_enabled_flag;
	unsigned char uniform_spacing_flag;
	unsigned char num_tile_columns_minus1;
	unsigned char num_tile_rows_minus1;
	unsigned short column_width_minus1[21];
	unsigned short row_height_minus1[21];
	unsigned char sps_range_extension_flag;
	unsigned char transform_skip_rotation_enabled_flag;
	unsigned char transform_skip_context_enabled_flag;
	unsigned char implicit_rdpcm_enabled_flag;
	unsigned char explicit_rdpcm_enabled_flag;
	unsigned char extended_precision_processing_flag;
	unsigned char intra_smoothing_disabled_flag;
	unsigned char persistent_rice_adaptation_enabled_flag;
	unsigned char cabac_bypass_alignment_enabled_flag;
	unsigned char pps_range_extension_flag;
	unsigned char cross_component_prediction_enabled_flag;
	unsigned char chroma_qp_offset_list_enabled_flag;
	unsigned char diff_cu_chroma_qp_offset_depth;
	unsigned char chroma_qp_offset_list_len_minus1;
	signed char cb_qp_offset_list[6];
	signed char cr_qp_offset_list[6];
	unsigned char reserved2[2];
	unsigned int reserved3[8];
	int NumBitsForShortTermRPSInSlice;
	int NumDeltaPocsOfRefRpsIdx;
	int NumPocTotalCurr;
	int NumPocStCurrBefore;
	int NumPocStCurrAfter;
	int NumPocLtCurr;
	int CurrPicOrderCntVal;
	int RefPicIdx[16];
	int PicOrderCntVal[16];
	unsigned char IsLongTerm[16];
	unsigned char RefPicSetStCurrBefore[8];
	unsigned char RefPicSetStCurrAfter[8];
	unsigned char RefPicSetLtCurr[8];
	unsigned char RefPicSetInterLayer0[8];
	unsigned char RefPicSetInterLayer1[8];
	unsigned int reserved4[12];
	unsigned char ScalingList4x4[6][16];
	unsigned char ScalingList8x8[6][64];
	unsigned char ScalingList16x16[6][64];
	unsigned char ScalingList32x32[2][64];
	unsigned char ScalingListDCCoeff16x16[6];
	unsigned char ScalingListDCCoeff32x32[2];
} nvd_hevc_picparams; // CUVIDHEVCPICPARAMS

typedef struct {
	int PicWidthInMbs, FrameHeightInMbs; // the coded size in 16x16 blocks
	int CurrPicIdx;                      // the surface decoded into
	int field_pic_flag, bottom_field_flag, second_field;
	unsigned int nBitstreamDataLen;
	const unsigned char *pBitstreamData; // the picture's slice NAL units
	unsigned int nNumSlices;
	const unsigned int *pSliceDataOffsets; // where each slice starts in pBitstreamData
	int ref_pic_flag, intra_pic_flag;
	unsigned int Reserved[30];
	union {
		nvd_hevc_picparams hevc;
		unsigned int CodecReserved[1024];
	} CodecSpecific;
} nvd_picparams; // CUVIDPICPARAMS

_Static_assert(offsetof(nvd_hevc_picparams, reserved1) == 38, "CUVIDHEVCPICPARAMS");
_Static_assert(offsetof(nvd_hevc_picparams, column_width_minus1) == 80, "CUVIDHEVCPICPARAMS");
_Static_assert(offsetof(nvd_hevc_picparams, NumBitsForShortTermRPSInSlice) == 224, "CUVIDHEVCPICPARAMS");
_Static_assert(offsetof(nvd_hevc_picparams, ScalingList4x4) == 484, "CUVIDHEVCPICPARAMS");
_Static_assert(sizeof(nvd_hevc_picparams) == 1484, "CUVIDHEVCPICPARAMS");
_Static_assert(offsetof(nvd_picparams, pBitstreamData) == 32, "CUVIDPICPARAMS");
_Static_assert(offsetof(nvd_picparams, pSliceDataOffsets) == 48, "CUVIDPICPARAMS");
_Static_assert(offsetof(nvd_picparams, CodecSpecific) == 184, "CUVIDPICPARAMS");
_Static_assert(sizeof(nvd_picparams) == 4280, "CUVIDPICPARAMS");

// The fields of both, by name, offset and size: what the layout test
// compares with NVIDIA's header.
#define NVD_PIC_FIELDS(X) \
	X(PicWidthInMbs) X(FrameHeightInMbs) X(CurrPicIdx) X(field_pic_flag) X(bottom_field_flag) X(second_field) \
	X(nBitstreamDataLen) X(pBitstreamData) X(nNumSlices) X(pSliceDataOffsets) X(ref_pic_flag) X(intra_pic_flag) \
	X(Reserved) X(CodecSpecific)
#define NVD_HEVC_FIELDS(X) \
	X(pic_width_in_luma_samples) \
	X(pic_height_in_luma_samples) \
	X(log2_min_luma_coding_block_size_minus3) \
	X(log2_diff_max_min_luma_coding_block_size) \
	X(log2_min_transform_block_size_minus2) \
	X(log2_diff_max_min_transform_block_size) \
	X(pcm_enabled_flag) \
	X(log2_min_pcm_luma_coding_block_size_minus3) \
	X(log2_diff_max_min_pcm_luma_coding_block_size) \
	X(pcm_sample_bit_depth_luma_minus1) \
	X(pcm_sample_bit_depth_chroma_minus1) \
	X(pcm_loop_filter_disabled_flag) \
	X(strong_intra_smoothing_enabled_flag) \
	X(max_transform_hierarchy_depth_intra) \
	X(max_transform_hierarchy_depth_inter) \
	X(amp_enabled_flag) \
	X(separate_colour_plane_flag) \
	X(log2_max_pic_order_cnt_lsb_minus4) \
	X(num_short_term_ref_pic_sets) \
	X(long_term_ref_pics_present_flag) \
	X(num_long_term_ref_pics_sps) \
	X(sps_temporal_mvp_enabled_flag) \
	X(sample_adaptive_offset_enabled_flag) \
	X(scaling_list_enable_flag) \
	X(IrapPicFlag) \
	X(IdrPicFlag) \
	X(bit_depth_luma_minus8) \
	X(bit_depth_chroma_minus8) \
	X(log2_max_transform_skip_block_size_minus2) \
	X(log2_sao_offset_scale_luma) \
	X(log2_sao_offset_scale_chroma) \
	X(high_precision_offsets_enabled_flag) \
	X(reserved1) \
	X(dependent_slice_segments_enabled_flag) \
	X(slice_segment_header_extension_present_flag) \
	X(sign_data_hiding_enabled_flag) \
	X(cu_qp_delta_enabled_flag) \
	X(diff_cu_qp_delta_depth) \
	X(init_qp_minus26) \
	X(pps_cb_qp_offset) \
	X(pps_cr_qp_offset) \
	X(constrained_intra_pred_flag) \
	X(weighted_pred_flag) \
	X(weighted_bipred_flag) \
	X(transform_skip_enabled_flag) \
	X(transquant_bypass_enabled_flag) \
	X(entropy_coding_sync_enabled_flag) \
	X(log2_parallel_merge_level_minus2) \
	X(num_extra_slice_header_bits) \
	X(loop_filter_across_tiles_enabled_flag) \
	X(loop_filter_across_slices_enabled_flag) \
	X(output_flag_present_flag) \
	X(num_ref_idx_l0_default_active_minus1) \
	X(num_ref_idx_l1_default_active_minus1) \
	X(lists_modification_present_flag) \
	X(cabac_init_present_flag) \
	X(pps_slice_chroma_qp_offsets_present_flag) \
	X(deblocking_filter_override_enabled_flag) \
	X(pps_deblocking_filter_disabled_flag) \
	X(pps_beta_offset_div2) \
	X(pps_tc_offset_div2) \
	X(tiles_enabled_flag) \
	X(uniform_spacing_flag) \
	X(num_tile_columns_minus1) \
	X(num_tile_rows_minus1) \
	X(column_width_minus1) \
	X(row_height_minus1) \
	X(sps_range_extension_flag) \
	X(transform_skip_rotation_enabled_flag) \
	X(transform_skip_context_enabled_flag) \
	X(implicit_rdpcm_enabled_flag) \
	X(explicit_rdpcm_enabled_flag) \
	X(extended_precision_processing_flag) \
	X(intra_smoothing_disabled_flag) \
	X(persistent_rice_adaptation_enabled_flag) \
	X(cabac_bypass_alignment_enabled_flag) \
	X(pps_range_extension_flag) \
	X(cross_component_prediction_enabled_flag) \
	X(chroma_qp_offset_list_enabled_flag) \
	X(diff_cu_chroma_qp_offset_depth) \
	X(chroma_qp_offset_list_len_minus1) \
	X(cb_qp_offset_list) \
	X(cr_qp_offset_list) \
	X(reserved2) \
	X(reserved3) \
	X(NumBitsForShortTermRPSInSlice) \
	X(NumDeltaPocsOfRefRpsIdx) \
	X(NumPocTotalCurr) \
	X(NumPocStCurrBefore) \
	X(NumPocStCurrAfter) \
	X(NumPocLtCurr) \
	X(CurrPicOrderCntVal) \
	X(RefPicIdx) \
	X(PicOrderCntVal) \
	X(IsLongTerm) \
	X(RefPicSetStCurrBefore) \
	X(RefPicSetStCurrAfter) \
	X(RefPicSetLtCurr) \
	X(RefPicSetInterLayer0) \
	X(RefPicSetInterLayer1) \
	X(reserved4) \
	X(ScalingList4x4) \
	X(ScalingList8x8) \
	X(ScalingList16x16) \
	X(ScalingList32x32) \
	X(ScalingListDCCoeff16x16) \
	X(ScalingListDCCoeff32x32)

typedef struct {
	const char *name;
	size_t offset, size;
} nvd_field;

#define NVD_FIELD_OF(T, f) {#f, offsetof(T, f), sizeof(((T *)0)->f)},
#define NVD_PIC_FIELD(f) NVD_FIELD_OF(nvd_picparams, f)
#define NVD_HEVC_FIELD(f) NVD_FIELD_OF(nvd_hevc_picparams, f)
static const nvd_field nvd_pic_layout[] = {NVD_PIC_FIELDS(NVD_PIC_FIELD)};
static const nvd_field nvd_hevc_layout[] = {NVD_HEVC_FIELDS(NVD_HEVC_FIELD)};

// nvd_layout is one of the tables (hevc: CUVIDHEVCPICPARAMS's) and its length.
static const nvd_field *nvd_layout(int hevc, int *n) {
	if (hevc) {
		*n = sizeof nvd_hevc_layout / sizeof nvd_hevc_layout[0];
		return nvd_hevc_layout;
	}
	*n = sizeof nvd_pic_layout / sizeof nvd_pic_layout[0];
	return nvd_pic_layout;
}
#undef NVD_PIC_FIELD
#undef NVD_HEVC_FIELD
#undef NVD_FIELD_OF

// ---- the function table -------------------------------------------------

typedef struct {
	void *cuvid;         // the dlopen handle of libnvcuvid
	const onair_cu *cu;  // the loader's table: every CUDA driver call
	void *ctx;           // the Context's CUcontext (the device's primary context)

	nvd_result (*cuvidGetDecoderCaps)(nvd_caps *);
	nvd_result (*cuvidCreateDecoder)(void **, nvd_create_info *);
	nvd_result (*cuvidDestroyDecoder)(void *);
	nvd_result (*cuvidDecodePicture)(void *, void *);
	nvd_result (*cuvidGetDecodeStatus)(void *, int, nvd_decode_status *);
	nvd_result (*cuvidMapVideoFrame64)(void *, int, unsigned long long *, unsigned int *, nvd_proc_params *);
	nvd_result (*cuvidUnmapVideoFrame64)(void *, unsigned long long);
	nvd_result (*cuvidCreateVideoParser)(void **, nvd_parser_params *);
	nvd_result (*cuvidParseVideoData)(void *, nvd_packet *);
	nvd_result (*cuvidDestroyVideoParser)(void *);
	nvd_result (*cuvidCtxLockCreate)(void **, void *);
	nvd_result (*cuvidCtxLockDestroy)(void *);
} nvd_lib;

// nvd_load opens the NVDEC library and looks every cuvid call up, for the
// context ctx of the loader's table cu; on failure it writes what is
// missing to err and returns NULL.
static nvd_lib *nvd_load(const char *cuvid_name, const onair_cu *cu, void *ctx, char *err, size_t errlen) {
	nvd_lib *l = calloc(1, sizeof *l);
	if (!l) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->cu = cu;
	l->ctx = ctx;
	l->cuvid = dlopen(cuvid_name, RTLD_NOW | RTLD_LOCAL);
	if (!l->cuvid) {
		snprintf(err, errlen, "%s", dlerror());
		free(l);
		return NULL;
	}
#define NVD_SYM(field)                                                                                     \
	do {                                                                                                  \
		*(void **)(&l->field) = dlsym(l->cuvid, #field);                                                   \
		if (!l->field) {                                                                                  \
			snprintf(err, errlen, "%s has no %s (the NVIDIA driver is too old for onair's NVDEC)", cuvid_name, #field); \
			dlclose(l->cuvid);                                                                            \
			free(l);                                                                                      \
			return NULL;                                                                                  \
		}                                                                                                 \
	} while (0)
	NVD_SYM(cuvidGetDecoderCaps);
	NVD_SYM(cuvidCreateDecoder);
	NVD_SYM(cuvidDestroyDecoder);
	NVD_SYM(cuvidDecodePicture);
	NVD_SYM(cuvidGetDecodeStatus);
	NVD_SYM(cuvidMapVideoFrame64);
	NVD_SYM(cuvidUnmapVideoFrame64);
	NVD_SYM(cuvidCreateVideoParser);
	NVD_SYM(cuvidParseVideoData);
	NVD_SYM(cuvidDestroyVideoParser);
	NVD_SYM(cuvidCtxLockCreate);
	NVD_SYM(cuvidCtxLockDestroy);
#undef NVD_SYM
	return l;
}

static void nvd_close(nvd_lib *l) {
	dlclose(l->cuvid);
	free(l);
}

// nvd_current makes the library's context current on the calling thread.
static nvd_result nvd_current(nvd_lib *l) { return l->cu->CtxSetCurrent(l->ctx); }

static nvd_result nvd_caps_query(nvd_lib *l, int codec, int depth_minus8, nvd_caps *c) {
	nvd_result r = nvd_current(l);
	if (r) return r;
	memset(c, 0, sizeof *c);
	c->codec = codec;
	c->chroma_format = NVD_CHROMA_420;
	c->depth_minus8 = depth_minus8;
	return l->cuvidGetDecoderCaps(c);
}

// ---- one decoder: a parser, the decoder it creates, the display queue ----

#define NVD_QUEUE 64

// nvd_clocks is where a decode loop's thread spends CPU, call by call, in
// ns of thread CPU time: the whole of cuvidParseVideoData (the parser and
// its callbacks), cuvidDecodePicture inside it, cuvidMapVideoFrame64, the
// plane copies queued (a picture's cuMemcpy2DAsync calls, or the round's
// kernel launch: nvd_copy_launch), cuvidGetDecodeStatus and
// cuvidUnmapVideoFrame64.
// Opt-in (a decoder without one reads no clock): each reading is a system
// call.
typedef struct {
	long long parse, decode, map, copy, status, unmap;
} nvd_clocks;

static inline long long nvd_tcpu(const nvd_clocks *c) {
	if (!c) return 0;
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// nvd_event is what a decoder in capture mode saw NVIDIA's parser do, in
// order: a picture handed to the decode callback (pp, a copy of its
// parameters, its bitstream and slice offsets copied too) or one handed to
// the display callback (di).
typedef struct {
	int display;
	nvd_picparams *pp;
	unsigned char *data;
	unsigned int *offsets;
	nvd_dispinfo di;
} nvd_event;

typedef struct {
	nvd_lib *lib;
	void *parser, *decoder, *lock;

	// What the source declares; the stream must agree.
	int codec, depth, width, height;
	int display_delay, extra_surfaces, output_surfaces;

	// What the stream says (the sequence callback).
	nvd_format fmt;
	int surfaces; // decode surfaces created
	int bps;      // bytes per sample of the output: 1 (NV12) or 2 (P016)

	nvd_dispinfo queue[NVD_QUEUE];
	int qhead, qlen;
	int eos;              // the parser signalled the end of the stream
	long long decoded;    // pictures handed to the engine

	nvd_result err_code;  // the first failure in a callback
	char err[320];

	nvd_clocks *clk;      // the loop's CPU clocks, or NULL (off)

	// Capture mode (a check of onair's HEVC parser against NVIDIA's): the
	// parser's callbacks log what they saw for the Go side to read.
	int capture;
	nvd_event *events;
	int nevents, cap_events;

	// onair's parser (no NVIDIA parser): the picture parameters filled
	// from Go (nvd_own_params, nvd_own_decode).
	nvd_picparams *own;
} nvd_dec;

static int nvd_fail(nvd_dec *d, nvd_result code, const char *msg) {
	if (!d->err[0]) {
		d->err_code = code ? code : -1;
		snprintf(d->err, sizeof d->err, "%s", msg);
	}
	return 0;
}

// nvd_sequence checks a sequence against the decoder's capabilities and
// what the source declared and creates the decoder the first time (a
// sequence again must keep the format). It returns the decode surfaces, 0
// on failure (d->err says why). NVIDIA's parser reaches it through its
// sequence callback; onair's HEVC parser from Go, with the format made from
// its SPS.
static int nvd_sequence(nvd_dec *d, nvd_format *f) {
	char msg[320];
	int w = f->right - f->left, h = f->bottom - f->top;
	int depth = 8 + f->depth_luma_minus8;
	if (d->decoder) {
		// A sequence again: the same format goes on; another is refused.
		if (f->coded_width == d->fmt.coded_width && f->coded_height == d->fmt.coded_height && w == d->width &&
		    h == d->height && f->depth_luma_minus8 == d->fmt.depth_luma_minus8 && f->chroma_format == d->fmt.chroma_format)
			return d->surfaces;
		snprintf(msg, sizeof msg, "the stream changes to %dx%d %d-bit (coded %ux%u): a decoder keeps the size and format it started with",
			 w, h, depth, f->coded_width, f->coded_height);
		return nvd_fail(d, 0, msg);
	}
	if (f->chroma_format != NVD_CHROMA_420) {
		snprintf(msg, sizeof msg, "the stream's chroma format is %d, not 4:2:0: onair decodes NV12 and P010 only", f->chroma_format);
		return nvd_fail(d, 0, msg);
	}
	if (f->depth_chroma_minus8 != f->depth_luma_minus8 || depth != d->depth || w != d->width || h != d->height) {
		snprintf(msg, sizeof msg, "the stream is %dx%d %d-bit, the source declares %dx%d %d-bit: set the source's size and format to the stream's",
			 w, h, depth, d->width, d->height, d->depth);
		return nvd_fail(d, 0, msg);
	}
	if (f->left < 0 || f->top < 0 || (f->left | f->top) & 1 || f->right > (int)f->coded_width || f->bottom > (int)f->coded_height) {
		snprintf(msg, sizeof msg, "the stream's display area %d,%d-%d,%d does not fit its coded %ux%u", f->left, f->top, f->right, f->bottom, f->coded_width, f->coded_height);
		return nvd_fail(d, 0, msg);
	}
	nvd_caps caps;
	nvd_result r = nvd_caps_query(d->lib, f->codec, f->depth_luma_minus8, &caps);
	if (r) return nvd_fail(d, r, "cuvidGetDecoderCaps");
	int surface = depth > 8 ? NVD_SURFACE_P016 : NVD_SURFACE_NV12;
	if (!caps.supported) {
		snprintf(msg, sizeof msg, "this GPU's NVDEC does not decode %d-bit 4:2:0 of codec %d", depth, f->codec);
		return nvd_fail(d, 0, msg);
	}
	if (f->coded_width > caps.max_width || f->coded_height > caps.max_height || f->coded_width < caps.min_width ||
	    f->coded_height < caps.min_height || (unsigned long)f->coded_width * f->coded_height / 256 > caps.max_mb_count) {
		snprintf(msg, sizeof msg, "coded size %ux%u is outside what this GPU's NVDEC decodes (%ux%u to %ux%u, %u macroblocks)",
			 f->coded_width, f->coded_height, caps.min_width, caps.min_height, caps.max_width, caps.max_height, caps.max_mb_count);
		return nvd_fail(d, 0, msg);
	}
	if (!(caps.output_formats & (1 << surface))) {
		snprintf(msg, sizeof msg, "this GPU's NVDEC has no %s output for %d-bit video", surface ? "P016" : "NV12", depth);
		return nvd_fail(d, 0, msg);
	}
	int surfaces = f->min_surfaces + d->display_delay + d->extra_surfaces;
	if (surfaces > 32) surfaces = 32;
	if (surfaces < f->min_surfaces) surfaces = f->min_surfaces;
	nvd_create_info ci;
	memset(&ci, 0, sizeof ci);
	ci.width = f->coded_width;
	ci.height = f->coded_height;
	ci.max_width = f->coded_width;
	ci.max_height = f->coded_height;
	ci.num_decode_surfaces = surfaces;
	ci.codec = f->codec;
	ci.chroma_format = f->chroma_format;
	ci.creation_flags = NVD_CREATE_PREFER_CUVID;
	ci.depth_minus8 = f->depth_luma_minus8;
	// No cropping or scaling in the decoder: the whole coded picture comes
	// out as decoded, and the copy takes the display area (a plain copy,
	// byte for byte what a software decoder crops).
	ci.display_area.right = (short)f->coded_width;
	ci.display_area.bottom = (short)f->coded_height;
	ci.target_width = f->coded_width;
	ci.target_height = f->coded_height;
	ci.output_format = surface;
	ci.deinterlace_mode = NVD_DEINTERLACE_WEAVE;
	ci.num_output_surfaces = d->output_surfaces;
	ci.vid_lock = d->lock;
	if ((r = nvd_current(d->lib))) return nvd_fail(d, r, "cuCtxSetCurrent");
	if ((r = d->lib->cuvidCreateDecoder(&d->decoder, &ci))) {
		d->decoder = NULL;
		return nvd_fail(d, r, "cuvidCreateDecoder");
	}
	d->fmt = *f;
	d->surfaces = surfaces;
	d->bps = depth > 8 ? 2 : 1;
	return surfaces;
}

static int nvd_on_sequence(void *user, nvd_format *f) { return nvd_sequence(user, f); }

// nvd_capture_add logs an event (capture mode); 0 when out of memory.
static nvd_event *nvd_capture_add(nvd_dec *d) {
	if (d->nevents == d->cap_events) {
		int n = d->cap_events ? 2 * d->cap_events : 16;
		nvd_event *e = realloc(d->events, n * sizeof *e);
		if (!e) return NULL;
		d->events = e;
		d->cap_events = n;
	}
	nvd_event *e = &d->events[d->nevents++];
	memset(e, 0, sizeof *e);
	return e;
}

// nvd_capture_clear frees the events logged, once Go has read them.
static void nvd_capture_clear(nvd_dec *d) {
	for (int i = 0; i < d->nevents; i++) {
		free(d->events[i].pp);
		free(d->events[i].data);
		free(d->events[i].offsets);
	}
	d->nevents = 0;
}

static int nvd_capture_picture(nvd_dec *d, const nvd_picparams *pp) {
	nvd_event *e = nvd_capture_add(d);
	if (!e) return 0;
	e->pp = malloc(sizeof *pp);
	e->data = malloc(pp->nBitstreamDataLen + 1);
	e->offsets = malloc(pp->nNumSlices * sizeof(unsigned int) + 1);
	if (!e->pp || !e->data || !e->offsets) return 0;
	*e->pp = *pp;
	if (pp->nBitstreamDataLen) memcpy(e->data, pp->pBitstreamData, pp->nBitstreamDataLen);
	if (pp->nNumSlices) memcpy(e->offsets, pp->pSliceDataOffsets, pp->nNumSlices * sizeof(unsigned int));
	e->pp->pBitstreamData = e->data;
	e->pp->pSliceDataOffsets = e->offsets;
	return 1;
}

static int nvd_on_decode(void *user, void *pic) {
	nvd_dec *d = user;
	if (!d->decoder) return nvd_fail(d, 0, "a picture came before any sequence header");
	if (d->capture && !nvd_capture_picture(d, pic)) return nvd_fail(d, 0, "out of memory capturing a picture's parameters");
	long long t = nvd_tcpu(d->clk);
	nvd_result r = d->lib->cuvidDecodePicture(d->decoder, pic);
	if (d->clk) d->clk->decode += nvd_tcpu(d->clk) - t;
	if (r) return nvd_fail(d, r, "cuvidDecodePicture");
	d->decoded++;
	return 1;
}

static int nvd_on_display(void *user, nvd_dispinfo *di) {
	nvd_dec *d = user;
	if (!di) {
		d->eos = 1;
		return 1;
	}
	if (d->capture) {
		nvd_event *e = nvd_capture_add(d);
		if (!e) return nvd_fail(d, 0, "out of memory capturing a display");
		e->display = 1;
		e->di = *di;
	}
	if (d->qlen == NVD_QUEUE) return nvd_fail(d, 0, "more pictures waiting for display than the queue holds");
	d->queue[(d->qhead + d->qlen) % NVD_QUEUE] = *di;
	d->qlen++;
	return 1;
}

// nvd_dec_new makes a decoder: with NVIDIA's parser, or (own set) without,
// for onair's HEVC parser to feed through nvd_sequence, nvd_own_decode and
// nvd_own_display.
static nvd_dec *nvd_dec_new(nvd_lib *l, int codec, int depth, int width, int height, int display_delay, int extra_surfaces,
			    int output_surfaces, int own, const char **what, nvd_result *rc) {
	nvd_dec *d = calloc(1, sizeof *d);
	if (!d) { *what = "calloc"; *rc = -1; return NULL; }
	d->lib = l;
	d->codec = codec;
	d->depth = depth;
	d->width = width;
	d->height = height;
	d->display_delay = display_delay;
	d->extra_surfaces = extra_surfaces;
	d->output_surfaces = output_surfaces;
	nvd_result r;
	if ((r = nvd_current(l))) { *what = "cuCtxSetCurrent"; *rc = r; free(d); return NULL; }
	if ((r = l->cuvidCtxLockCreate(&d->lock, l->ctx))) { *what = "cuvidCtxLockCreate"; *rc = r; free(d); return NULL; }
	if (own) return d;
	nvd_parser_params p;
	memset(&p, 0, sizeof p);
	p.codec = codec;
	p.max_surfaces = 1; // the sequence callback says how many the stream needs
	p.error_threshold = 100; // decode every picture, concealing what is broken, as a software decoder does
	p.max_display_delay = display_delay;
	p.user = d;
	p.on_sequence = nvd_on_sequence;
	p.on_decode = nvd_on_decode;
	p.on_display = nvd_on_display;
	if ((r = l->cuvidCreateVideoParser(&d->parser, &p))) {
		*what = "cuvidCreateVideoParser";
		*rc = r;
		l->cuvidCtxLockDestroy(d->lock);
		free(d);
		return NULL;
	}
	return d;
}

static void nvd_dec_free(nvd_dec *d) {
	nvd_current(d->lib);
	if (d->parser) d->lib->cuvidDestroyVideoParser(d->parser);
	if (d->decoder) d->lib->cuvidDestroyDecoder(d->decoder);
	if (d->lock) d->lib->cuvidCtxLockDestroy(d->lock);
	nvd_capture_clear(d);
	free(d->events);
	free(d->own);
	free(d);
}

// ---- onair's HEVC parser feeding the decoder ----------------------------

// nvd_own_params is the decoder's picture parameters for onair's parser
// to fill (made the first time); NULL when out of memory.
static nvd_picparams *nvd_own_params(nvd_dec *d) {
	if (!d->own) d->own = calloc(1, sizeof *d->own);
	return d->own;
}

// nvd_own_decode hands the picture in d->own to the engine with its slice
// data (len bytes, slices of them starting at offsets), which the engine
// takes in during the call: the data is the caller's and d->own keeps no
// pointer to it afterwards.
static int nvd_own_decode(nvd_dec *d, const unsigned char *data, size_t len, const unsigned int *offsets, size_t slices) {
	d->own->pBitstreamData = data;
	d->own->nBitstreamDataLen = (unsigned int)len;
	d->own->pSliceDataOffsets = offsets;
	d->own->nNumSlices = (unsigned int)slices;
	int ok = nvd_on_decode(d, d->own);
	d->own->pBitstreamData = NULL;
	d->own->pSliceDataOffsets = NULL;
	return ok;
}

// nvd_own_display queues a decoded picture for display, as NVIDIA's parser
// does through the display callback.
static int nvd_own_display(nvd_dec *d, int surface, long long ts) {
	nvd_dispinfo di;
	memset(&di, 0, sizeof di);
	di.picture_index = surface;
	di.progressive_frame = 1;
	di.timestamp = ts;
	return nvd_on_display(d, &di);
}

// nvd_parse hands the parser one access unit (or, with len 0 and eos set,
// the end of the stream). The callbacks run inside.
static nvd_result nvd_parse(nvd_dec *d, const unsigned char *data, size_t len, long long ts, int has_ts, int eos) {
	nvd_packet pkt;
	memset(&pkt, 0, sizeof pkt);
	pkt.payload = data;
	pkt.payload_size = len;
	pkt.timestamp = ts;
	if (has_ts) pkt.flags |= NVD_PKT_TIMESTAMP;
	if (eos) pkt.flags |= NVD_PKT_ENDOFSTREAM | NVD_PKT_NOTIFY_EOS;
	else pkt.flags |= NVD_PKT_ENDOFPICTURE;
	long long t = nvd_tcpu(d->clk);
	nvd_result r = d->lib->cuvidParseVideoData(d->parser, &pkt);
	if (d->clk) d->clk->parse += nvd_tcpu(d->clk) - t;
	return r;
}

// nvd_status is the engine's decode status of picture pic, or 0 when it
// cannot be asked.
static int nvd_status(nvd_dec *d, int pic) {
	nvd_decode_status st;
	memset(&st, 0, sizeof st);
	if (!d->decoder) return 0;
	long long t = nvd_tcpu(d->clk);
	nvd_result r = d->lib->cuvidGetDecodeStatus(d->decoder, pic, &st);
	if (d->clk) d->clk->status += nvd_tcpu(d->clk) - t;
	return r ? 0 : st.status;
}

// nvd_copies is a decode loop's plane copies of one round, for one launch
// of the copy kernel (compositor.h): the kernel argument, filled by
// nvd_map_head, and the kernels (CUfunctions of the loop's context).
typedef struct {
	onair_copy128_args a;
	void *copy8, *copy128;
} nvd_copies;

// nvd_regions is the display area of the picture mapped at src (pitch
// bytes a row: the luma rows of the coded height, then the chroma rows)
// as the regions to copy into dst (pitched device memory: dst_pitch bytes
// a row, the chroma rows right after the luma rows): one when the
// surface's chroma rows follow its luma rows as the frame's do, luma and
// chroma otherwise. It returns how many.
static int nvd_regions(const nvd_dec *d, unsigned long long src, unsigned int pitch, unsigned long long dst, size_t dst_pitch,
		       onair_copy_entry e[2]) {
	int w = d->width, h = d->height, left = d->fmt.left, top = d->fmt.top;
	memset(e, 0, 2 * sizeof e[0]);
	e[0].src = src + (unsigned long long)top * pitch + (unsigned long long)left * d->bps;
	e[0].src_pitch = pitch;
	e[0].dst = dst;
	e[0].dst_pitch = (unsigned int)dst_pitch;
	e[0].width = (unsigned int)(w * d->bps);
	if (top == 0 && left == 0 && (int)d->fmt.coded_height == h) {
		e[0].rows = h + h / 2; // row h of each is the first chroma row
		return 1;
	}
	e[0].rows = h;
	// The chroma plane follows the luma plane of the surface's full
	// (coded) height; its rows are half the luma's, its samples interleaved
	// Cb,Cr pairs as wide as the luma's samples.
	e[1] = e[0];
	e[1].src = src + (unsigned long long)pitch * d->fmt.coded_height + (unsigned long long)(top / 2) * pitch + (unsigned long long)left * d->bps;
	e[1].dst = dst + (unsigned long long)dst_pitch * h;
	e[1].rows = h / 2;
	return 2;
}

// nvd_map_head maps the picture at the head of the display queue and pops
// it; the copy of its display area (luma, then chroma) into dst (pitched
// device memory: dst_pitch bytes a row, the chroma rows right after the
// luma rows) is queued on stream (cuMemcpy2DAsync) or, with copies, added
// to the round's table for nvd_copy_launch, which must have room for two
// more entries. *mapped is what nvd_unmap releases once the stream has
// finished; *ts its timestamp, *pic its surface. The map waits for the
// picture to be decoded.
static nvd_result nvd_map_head(nvd_dec *d, void *stream, unsigned long long dst, size_t dst_pitch, nvd_copies *copies,
			       unsigned long long *mapped, long long *ts, int *pic, const char **what) {
	nvd_dispinfo di = d->queue[d->qhead];
	*pic = di.picture_index;
	nvd_proc_params p;
	memset(&p, 0, sizeof p);
	p.progressive_frame = di.progressive_frame;
	p.second_field = di.repeat_first_field + 1;
	p.top_field_first = di.top_field_first;
	p.unpaired_field = di.repeat_first_field < 0;
	p.output_stream = stream;
	unsigned long long src = 0;
	unsigned int pitch = 0;
	long long t = nvd_tcpu(d->clk);
	nvd_result r = d->lib->cuvidMapVideoFrame64(d->decoder, di.picture_index, &src, &pitch, &p);
	if (d->clk) {
		long long now = nvd_tcpu(d->clk);
		d->clk->map += now - t;
		t = now;
	}
	if (r) { *what = "cuvidMapVideoFrame64"; return r; }
	d->qhead = (d->qhead + 1) % NVD_QUEUE;
	d->qlen--;
	*mapped = src;
	*ts = di.timestamp;
	onair_copy_entry e[2];
	int n = nvd_regions(d, src, pitch, dst, dst_pitch, e);
	if (copies) {
		if (copies->a.entries + n > ONAIR_MAX_COPIES) { *what = "the round's copy table (full)"; return 1; }
		memcpy(&copies->a.e[copies->a.entries], e, n * sizeof e[0]);
		copies->a.entries += n;
		return 0;
	}
	static const char *const what_copy[3] = {"cuMemcpy2DAsync (both planes)", "cuMemcpy2DAsync (luma)", "cuMemcpy2DAsync (chroma)"};
	for (int i = 0; i < n; i++) {
		onair_copy2d c;
		memset(&c, 0, sizeof c);
		c.src_type = onair_mem_device;
		c.src_dev = e[i].src;
		c.src_pitch = e[i].src_pitch;
		c.dst_type = onair_mem_device;
		c.dst_dev = e[i].dst;
		c.dst_pitch = e[i].dst_pitch;
		c.width_bytes = e[i].width;
		c.height = e[i].rows;
		if ((r = d->lib->cu->Memcpy2DAsync(&c, stream))) { *what = what_copy[n == 1 ? 0 : 1 + i]; return r; }
	}
	if (d->clk) d->clk->copy += nvd_tcpu(d->clk) - t;
	return 0;
}

// nvd_copy_launch queues the copies in the table on stream, in one launch
// of onair_copy8 when they fit it (a smaller argument), of onair_copy128
// otherwise, and empties the table (the driver has copied the argument by
// then). clk, when set, counts the launch's CPU as the copies'.
static nvd_result nvd_copy_launch(nvd_lib *l, nvd_copies *c, void *stream, nvd_clocks *clk) {
	int n = c->a.entries;
	if (n == 0) return 0;
	long long t = nvd_tcpu(clk);
	void *params[1] = {&c->a};
	unsigned int gx = onair_copy_blocks(c->a.e, n);
	nvd_result r = l->cu->LaunchKernel(n <= 8 ? c->copy8 : c->copy128, gx, (unsigned int)n, 1, ONAIR_COPY_BX, ONAIR_COPY_BY, 1, 0,
					 stream, params, NULL);
	c->a.entries = 0;
	if (clk) clk->copy += nvd_tcpu(clk) - t;
	return r;
}

static nvd_result nvd_unmap(nvd_dec *d, unsigned long long mapped) {
	long long t = nvd_tcpu(d->clk);
	nvd_result r = d->lib->cuvidUnmapVideoFrame64(d->decoder, mapped);
	if (d->clk) d->clk->unmap += nvd_tcpu(d->clk) - t;
	return r;
}
