package es

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bitWriter writes the syntax bitstream.Reader reads: u(n) and ue(v),
// most significant bit first.
type bitWriter struct {
	b []byte
	n int // bits written
}

func (w *bitWriter) u(bits, v int) {
	for i := bits - 1; i >= 0; i-- {
		if w.n%8 == 0 {
			w.b = append(w.b, 0)
		}
		if v>>i&1 == 1 {
			w.b[len(w.b)-1] |= 0x80 >> (w.n % 8)
		}
		w.n++
	}
}

func (w *bitWriter) ue(v int) {
	v++
	bits := 0
	for x := v; x > 0; x >>= 1 {
		bits++
	}
	w.u(bits-1, 0)
	w.u(bits, v)
}

// rbsp ends the syntax with rbsp_trailing_bits and inserts the emulation
// prevention bytes.
func (w *bitWriter) rbsp() []byte {
	w.u(1, 1)
	for w.n%8 != 0 {
		w.u(1, 0)
	}
	var out []byte
	zeros := 0
	for _, b := range w.b {
		if zeros >= 2 && b <= 3 {
			out, zeros = append(out, 3), 0
		}
		out = append(out, b)
		if b == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	return out
}

// h264SPS is a Baseline sequence parameter set NAL unit (header included)
// for pictures of w x h, h cropped from whole macroblocks.
func h264SPS(w, h int) []byte {
	var b bitWriter
	b.u(8, 66) // profile_idc
	b.u(8, 0)  // constraint flags
	b.u(8, 30) // level_idc
	b.ue(0)    // seq_parameter_set_id
	b.ue(0)    // log2_max_frame_num_minus4
	b.ue(2)    // pic_order_cnt_type
	b.ue(1)    // max_num_ref_frames
	b.u(1, 0)  // gaps_in_frame_num_value_allowed_flag
	mbw, mbh := (w+15)/16, (h+15)/16
	b.ue(mbw - 1)
	b.ue(mbh - 1)
	b.u(1, 1) // frame_mbs_only_flag
	b.u(1, 1) // direct_8x8_inference_flag
	crop := (mbh*16 - h) / 2
	b.u(1, 1) // frame_cropping_flag
	b.ue(0)
	b.ue((mbw*16 - w) / 2)
	b.ue(0)
	b.ue(crop)
	b.u(1, 0) // vui_parameters_present_flag
	return append([]byte{0x67}, b.rbsp()...)
}

// hevcSPS is a Main sequence parameter set NAL unit (header included) for
// pictures of w x h, as far as the reader reads it.
func hevcSPS(w, h int) []byte {
	var b bitWriter
	b.u(4, 0) // sps_video_parameter_set_id
	b.u(3, 0) // sps_max_sub_layers_minus1
	b.u(1, 1) // sps_temporal_id_nesting_flag
	b.u(2, 0) // general_profile_space
	b.u(1, 0) // general_tier_flag
	b.u(5, 1) // general_profile_idc: Main
	b.u(32, 0x60000000)
	b.u(4, 0b1001)
	b.u(32, 0) // 43 reserved bits and general_inbld_flag
	b.u(12, 0)
	b.u(8, 120) // general_level_idc
	b.ue(0)     // sps_seq_parameter_set_id
	b.ue(1)     // chroma_format_idc
	b.ue(w)     // pic_width_in_luma_samples
	b.ue(h)     // pic_height_in_luma_samples
	b.u(1, 0)   // conformance_window_flag
	b.ue(0)     // bit_depth_luma_minus8
	b.ue(0)     // bit_depth_chroma_minus8
	b.ue(4)     // log2_max_pic_order_cnt_lsb_minus4
	return append([]byte{0x42, 0x01}, b.rbsp()...)
}

func annexB(nals ...[]byte) []byte {
	var out []byte
	for _, n := range nals {
		out = append(out, 0, 0, 0, 1)
		out = append(out, n...)
	}
	return out
}

// A sequence parameter set with a side over MaxSide is refused by name,
// not passed over: Open says what it declares and the limit, not that the
// picture has no parameter set.
func TestSPSOverTheSizeLimitIsReported(t *testing.T) {
	for _, tc := range []struct {
		codec      Codec
		name       string
		sps        func(w, h int) []byte
		pps, slice []byte
	}{
		{H264, "wide.264", h264SPS, []byte{0x68, 0xce, 0x38, 0x80}, []byte{0x65, 0x88, 0x84, 0x00, 0x33}},
		{HEVC, "wide.hevc", hevcSPS, []byte{0x44, 0x01, 0xc1, 0x72, 0xb4, 0x62, 0x40}, []byte{0x26, 0x01, 0xaf, 0x13, 0x80}},
	} {
		t.Run(tc.codec.String(), func(t *testing.T) {
			dir := t.TempDir()
			// The same parameter set at a size in range reads back, so the
			// crafted one is refused for its size alone.
			var scratch []byte
			info, err := parseSPS(tc.codec, tc.sps(1920, 1080), &scratch)
			if err != nil || info.Width != 1920 || info.Height != 1080 {
				t.Fatalf("the crafted SPS at 1920x1080 reads as %v, %v", info, err)
			}
			path := filepath.Join(dir, tc.name)
			if err := os.WriteFile(path, annexB(tc.sps(20000, 1080), tc.pps, tc.slice, tc.slice), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path, 0)
			if err == nil {
				r.Close()
				t.Fatal("opened")
			}
			msg := err.Error()
			for _, want := range []string{tc.name, tc.codec.String() + " sequence parameter set", "declares 20000x", "over the 16384 limit", "access unit 0"} {
				if !strings.Contains(msg, want) {
					t.Errorf("%q: want %q in it", msg, want)
				}
			}
			if strings.Contains(msg, "comes before any") {
				t.Errorf("%q: blames a missing parameter set for one that is there", msg)
			}
			// Mid-stream, the access unit says why its SPS is not used.
			data := append(annexB(tc.sps(1920, 1080), tc.pps, tc.slice), annexB(tc.sps(1920, 20000), tc.pps, tc.slice)...)
			aus := readAll(t, NewAnnexB(bytes.NewReader(data), tc.codec))
			if len(aus) != 2 || aus[0].Info == nil || aus[0].SPSError != nil || aus[1].Info != nil || aus[1].SPSError == nil ||
				!strings.Contains(aus[1].SPSError.Error(), "declares 1920x20000, over the 16384 limit") {
				t.Errorf("a stream whose second SPS is too tall: %d access units, the second's SPSError %v", len(aus), aus[len(aus)-1].SPSError)
			}
		})
	}
}
