package es

import (
	"errors"
	"fmt"

	"github.com/onairhq/onair/internal/bitstream"
)

var errShort = errors.New("parameter set ends early")

// subsampling returns SubWidthC and SubHeightC for a chroma format.
func subsampling(chroma int, separate bool) (int, int) {
	switch {
	case separate || chroma == 0 || chroma == 3:
		return 1, 1
	case chroma == 2:
		return 2, 1
	}
	return 2, 2
}

// parseSPS parses a sequence parameter set NAL unit (header included,
// emulation prevention bytes still in) of codec c. scratch is reused for
// the unescaped payload.
func parseSPS(c Codec, nal []byte, scratch *[]byte) (Info, error) {
	hdr := 1
	if c == HEVC {
		hdr = 2
	}
	if len(nal) <= hdr {
		return Info{}, errShort
	}
	*scratch = bitstream.Unescape(*scratch, nal[hdr:], 0)
	r := &bitstream.Reader{B: *scratch}
	var info Info
	var err error
	if c == HEVC {
		info, err = parseHEVCSPS(r)
	} else {
		info, err = parseH264SPS(r)
	}
	if err == nil {
		err = r.Err
	}
	if err != nil {
		return Info{}, fmt.Errorf("%s sequence parameter set (SPS): %w", c, err)
	}
	return info, nil
}

// parseH264SPS reads seq_parameter_set_data() (ITU-T H.264 7.3.2.1.1) as
// far as the frame cropping.
func parseH264SPS(r *bitstream.Reader) (Info, error) {
	info := Info{Codec: H264, ChromaFormat: 1, BitDepth: 8, BitDepthChroma: 8}
	info.Profile = r.U(8)
	r.Skip(16) // constraint_set flags, reserved_zero_2bits, level_idc
	if id := r.UE(); id > 31 {
		return info, fmt.Errorf("seq_parameter_set_id %d out of range", id)
	}
	separate := false
	switch info.Profile {
	case 100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135:
		info.ChromaFormat = r.UE()
		if info.ChromaFormat > 3 {
			return info, fmt.Errorf("chroma_format_idc %d out of range", info.ChromaFormat)
		}
		if info.ChromaFormat == 3 {
			separate = r.Flag()
		}
		info.BitDepth = 8 + r.UE()
		info.BitDepthChroma = 8 + r.UE()
		if info.BitDepth > 14 || info.BitDepthChroma > 14 {
			return info, fmt.Errorf("bit depth %d/%d out of range", info.BitDepth, info.BitDepthChroma)
		}
		r.Skip(1)     // qpprime_y_zero_transform_bypass_flag
		if r.Flag() { // seq_scaling_matrix_present_flag
			lists := 8
			if info.ChromaFormat == 3 {
				lists = 12
			}
			for i := 0; i < lists && r.Err == nil; i++ {
				if r.Flag() {
					size := 16
					if i >= 6 {
						size = 64
					}
					skipScalingList(r, size)
				}
			}
		}
	}
	if v := r.UE(); v > 12 { // log2_max_frame_num_minus4
		return info, fmt.Errorf("log2_max_frame_num_minus4 %d out of range", v)
	}
	switch poc := r.UE(); poc {
	case 0:
		r.UE() // log2_max_pic_order_cnt_lsb_minus4
	case 1:
		r.Skip(1) // delta_pic_order_always_zero_flag
		r.SE()    // offset_for_non_ref_pic
		r.SE()    // offset_for_top_to_bottom_field
		n := r.UE()
		if n > 255 {
			return info, fmt.Errorf("num_ref_frames_in_pic_order_cnt_cycle %d out of range", n)
		}
		for i := 0; i < n && r.Err == nil; i++ {
			r.SE()
		}
	case 2:
	default:
		return info, fmt.Errorf("pic_order_cnt_type %d out of range", poc)
	}
	r.UE()    // max_num_ref_frames
	r.Skip(1) // gaps_in_frame_num_value_allowed_flag
	wmbs := r.UE() + 1
	hmaps := r.UE() + 1
	frameMbsOnly := r.Flag()
	if !frameMbsOnly {
		r.Skip(1) // mb_adaptive_frame_field_flag
	}
	r.Skip(1) // direct_8x8_inference_flag
	var crop [4]int
	if r.Flag() {
		for i := range crop {
			crop[i] = r.UE()
		}
	}
	if r.Err != nil {
		return info, r.Err
	}
	fieldFactor := 1
	if !frameMbsOnly {
		fieldFactor = 2
	}
	info.Progressive = frameMbsOnly
	info.CodedWidth, info.CodedHeight = wmbs*16, hmaps*16*fieldFactor
	cx, cy := 1, fieldFactor
	if !separate && info.ChromaFormat != 0 {
		sw, sh := subsampling(info.ChromaFormat, false)
		cx, cy = sw, sh*fieldFactor
	}
	info.Crop = [4]int{crop[0] * cx, crop[1] * cx, crop[2] * cy, crop[3] * cy}
	return finish(info)
}

func skipScalingList(r *bitstream.Reader, size int) {
	last, next := 8, 8
	for j := 0; j < size && r.Err == nil; j++ {
		if next != 0 {
			next = (last + r.SE() + 256) % 256
		}
		if next != 0 {
			last = next
		}
	}
}

// parseHEVCSPS reads seq_parameter_set_rbsp() (ITU-T H.265 7.3.2.2) as far
// as the bit depths.
func parseHEVCSPS(r *bitstream.Reader) (Info, error) {
	info := Info{Codec: HEVC, Progressive: true}
	r.Skip(4) // sps_video_parameter_set_id
	maxSub := r.U(3)
	r.Skip(1) // sps_temporal_id_nesting_flag
	// profile_tier_level(1, maxSub)
	r.Skip(3) // general_profile_space, general_tier_flag
	info.Profile = r.U(5)
	r.Skip(32 + 4 + 43 + 1) // compatibility flags, source flags, constraint flags, inbld
	r.Skip(8)               // general_level_idc
	var profile, level [8]bool
	for i := 0; i < maxSub; i++ {
		profile[i], level[i] = r.Flag(), r.Flag()
	}
	if maxSub > 0 {
		r.Skip(2 * (8 - maxSub))
	}
	for i := 0; i < maxSub; i++ {
		if profile[i] {
			r.Skip(88)
		}
		if level[i] {
			r.Skip(8)
		}
	}
	if id := r.UE(); id > 15 {
		return info, fmt.Errorf("sps_seq_parameter_set_id %d out of range", id)
	}
	info.ChromaFormat = r.UE()
	if info.ChromaFormat > 3 {
		return info, fmt.Errorf("chroma_format_idc %d out of range", info.ChromaFormat)
	}
	separate := false
	if info.ChromaFormat == 3 {
		separate = r.Flag()
	}
	info.CodedWidth, info.CodedHeight = r.UE(), r.UE()
	var crop [4]int
	if r.Flag() {
		for i := range crop {
			crop[i] = r.UE()
		}
	}
	info.BitDepth = 8 + r.UE()
	info.BitDepthChroma = 8 + r.UE()
	if r.Err != nil {
		return info, r.Err
	}
	if info.BitDepth > 16 || info.BitDepthChroma > 16 {
		return info, fmt.Errorf("bit depth %d/%d out of range", info.BitDepth, info.BitDepthChroma)
	}
	sw, sh := subsampling(info.ChromaFormat, separate)
	info.Crop = [4]int{crop[0] * sw, crop[1] * sw, crop[2] * sh, crop[3] * sh}
	return finish(info)
}

// finish applies the crop and checks the sizes.
func finish(info Info) (Info, error) {
	if info.CodedWidth > MaxSide || info.CodedHeight > MaxSide {
		return info, fmt.Errorf("declares %dx%d, over the %d limit (onair plays pictures of at most %d on a side: scale the video down)", info.CodedWidth, info.CodedHeight, MaxSide, MaxSide)
	}
	if info.CodedWidth <= 0 || info.CodedHeight <= 0 {
		return info, fmt.Errorf("coded size %dx%d out of range", info.CodedWidth, info.CodedHeight)
	}
	for _, c := range info.Crop {
		if c < 0 || c > MaxSide {
			return info, fmt.Errorf("cropping %v out of range", info.Crop)
		}
	}
	info.Width = info.CodedWidth - info.Crop[0] - info.Crop[1]
	info.Height = info.CodedHeight - info.Crop[2] - info.Crop[3]
	if info.Width <= 0 || info.Height <= 0 {
		return info, fmt.Errorf("cropping %v leaves no picture of %dx%d", info.Crop, info.CodedWidth, info.CodedHeight)
	}
	return info, nil
}
