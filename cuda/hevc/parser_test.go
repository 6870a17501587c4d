package hevc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// accessUnits splits an Annex B stream into access units (7.4.2.4.4): a
// new one starts at a VPS, SPS, PPS, access unit delimiter or prefix SEI
// after a picture's slices, or at a first slice segment.
func accessUnits(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var aus [][]byte
	start, vcl := -1, false
	nalUnits(data, nil, func(nal []byte, at, _ int) error {
		typ := int(nal[0]>>1) & 63
		isVCL := typ < 32
		first := isVCL && len(nal) > 2 && nal[2]&0x80 != 0
		opens := (typ >= 32 && typ <= 35) || typ == 39 || (typ >= 41 && typ <= 44) || first
		if opens && vcl {
			aus = append(aus, data[start:at])
			start, vcl = at, false
		}
		if start < 0 {
			start = at
		}
		vcl = vcl || isVCL
		return nil
	})
	if start >= 0 {
		aus = append(aus, data[start:])
	}
	return aus
}

// traced is one first slice segment as ffmpeg's trace_headers printed it.
type traced struct {
	nalType, pocLsb int
	stBits          int // bits of the st_ref_pic_set() coded in the header, -1: the SPS's
}

// traceSlices runs ffmpeg's trace_headers over path and returns each
// picture's first slice segment header, in decoding order.
func traceSlices(t *testing.T, path string) []traced {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-hide_banner", "-i", path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-").CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg trace_headers: %v\n%s", err, out)
	}
	var res []traced
	var cur *traced
	nalType, rpsFrom := 0, -1
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// "[trace_headers @ 0x...] POS NAME BITS = VALUE"
		if len(f) < 7 || f[len(f)-2] != "=" {
			continue
		}
		pos, err1 := strconv.Atoi(f[3])
		val, err2 := strconv.Atoi(f[len(f)-1])
		if err1 != nil || err2 != nil {
			continue
		}
		name := f[4]
		switch {
		case name == "nal_unit_type":
			nalType, cur = val, nil
		case name == "first_slice_segment_in_pic_flag" && val == 1:
			res = append(res, traced{nalType: nalType, stBits: -1})
			cur = &res[len(res)-1]
		case cur == nil:
		case name == "slice_pic_order_cnt_lsb":
			cur.pocLsb = val
		case name == "short_term_ref_pic_set_sps_flag":
			if val == 0 {
				rpsFrom = pos + 1
			} else {
				rpsFrom = -1
			}
		case rpsFrom >= 0 && !isRPSElement(name):
			cur.stBits = pos - rpsFrom
			rpsFrom = -1
		}
	}
	return res
}

func isRPSElement(name string) bool {
	for _, p := range []string{"inter_ref_pic_set_prediction_flag", "delta_idx_minus1", "delta_rps_sign", "abs_delta_rps_minus1",
		"used_by_curr_pic_flag", "use_delta_flag", "num_negative_pics", "num_positive_pics", "delta_poc_s0_minus1",
		"used_by_curr_pic_s0_flag", "delta_poc_s1_minus1", "used_by_curr_pic_s1_flag"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// clips are the committed test clips and, where ffmpeg with libx265 is
// here, streams made to exercise what the committed ones do not: open
// GOPs with RASL pictures, B-pyramids with many references, several
// slices a picture, scaling lists, 10-bit.
func clips(t *testing.T) map[string]string {
	t.Helper()
	es := filepath.Join("..", "..", "nodes", "media", "es", "testdata")
	out := map[string]string{
		"hevc8":  filepath.Join(es, "hevc8.hevc"),
		"hevc10": filepath.Join(es, "hevc10.hevc"),
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil || testing.Short() {
		return out
	}
	dir := t.TempDir()
	for name, x265 := range map[string]string{
		"opengop-pyramid-slices": "keyint=12:min-keyint=12:scenecut=0:open-gop=1:bframes=4:b-pyramid=1:ref=4:slices=3",
		"scaling-lists":          "keyint=10:bframes=2:scaling-list=default:ref=3",
		"p-only-longref":         "keyint=30:bframes=0:ref=6",
		"10bit-opengop":          "keyint=9:min-keyint=9:scenecut=0:open-gop=1:bframes=3",
	} {
		path := filepath.Join(dir, name+".hevc")
		pix := "yuv420p"
		if strings.HasPrefix(name, "10bit") {
			pix = "yuv420p10le"
		}
		cmd := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=320x184:rate=30",
			"-frames:v", "40", "-pix_fmt", pix, "-c:v", "libx265", "-x265-params", x265+":log-level=error", path)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Logf("ffmpeg cannot make %s (%v): %s", name, err, b)
			continue
		}
		out[name] = path
	}
	return out
}

// Every picture's POC and the bits of its slice-coded reference picture
// set agree with ffmpeg's reading of the same headers; every picture is
// shown once, in POC order within each coded video sequence; and no
// picture decodes into a surface a picture it may reference still holds.
func TestParserAgreesWithFFmpeg(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("no ffmpeg to read the headers with")
	}
	for name, path := range clips(t) {
		for _, delay := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s/delay%d", name, delay), func(t *testing.T) {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				want := traceSlices(t, path)
				p := NewParser()
				p.SetSurfaces(20)
				p.SetDisplayDelay(delay)
				unshown := map[int]bool{} // surfaces holding a picture not handed out yet
				var decoded []int32
				var shown []Display
				held := map[int]int32{} // surface -> POC of a picture that may still be referenced or shown
				for i, au := range accessUnits(t, data) {
					pics, out, err := p.Next(au, int64(i))
					if err != nil {
						t.Fatalf("access unit %d: %v", i, err)
					}
					for _, pic := range pics {
						n := len(decoded)
						if n >= len(want) {
							t.Fatalf("picture %d: ffmpeg read %d pictures", n, len(want))
						}
						w := want[n]
						lsb := pic.POC & (1<<(pic.Log2MaxPicOrderCntLsbMinus4+4) - 1)
						if pic.IdrPicFlag == 0 && int(lsb) != w.pocLsb {
							t.Errorf("picture %d: POC %d (lsb %d), ffmpeg read lsb %d", n, pic.POC, lsb, w.pocLsb)
						}
						if w.stBits >= 0 && int(pic.NumBitsForShortTermRPSInSlice) != w.stBits {
							t.Errorf("picture %d: %d bits of reference picture set in its header, ffmpeg %d", n, pic.NumBitsForShortTermRPSInSlice, w.stBits)
						}
						for k := 0; k < 16; k++ {
							if s := pic.RefPicIdx[k]; s >= 0 {
								if s == int32(pic.CurrPicIdx) {
									t.Errorf("picture %d decodes into surface %d, which its reference POC %d holds", n, s, pic.PicOrderCntVal[k])
								}
								if poc, ok := held[int(s)]; !ok || poc != pic.PicOrderCntVal[k] {
									t.Errorf("picture %d: reference %d is surface %d with POC %d; that surface holds %d (%v)", n, k, s, pic.PicOrderCntVal[k], poc, ok)
								}
							}
						}
						for k := int32(0); k < pic.NumPocStCurrBefore; k++ {
							if ref := pic.PicOrderCntVal[pic.RefPicSetStCurrBefore[k]]; ref >= pic.POC {
								t.Errorf("picture %d (POC %d): reference before it has POC %d", n, pic.POC, ref)
							}
						}
						for k := int32(0); k < pic.NumPocStCurrAfter; k++ {
							if ref := pic.PicOrderCntVal[pic.RefPicSetStCurrAfter[k]]; ref <= pic.POC {
								t.Errorf("picture %d (POC %d): reference after it has POC %d", n, pic.POC, ref)
							}
						}
						if len(pic.SliceOffsets) == 0 || !bytes.HasPrefix(pic.Data[pic.SliceOffsets[0]:], []byte{0, 0, 1}) {
							t.Errorf("picture %d: slices %v do not start with a start code", n, pic.SliceOffsets)
						}
						if unshown[pic.CurrPicIdx] {
							t.Errorf("picture %d decodes into surface %d before the picture there was shown", n, pic.CurrPicIdx)
						}
						unshown[pic.CurrPicIdx] = pic.Output
						held[pic.CurrPicIdx] = pic.POC
						decoded = append(decoded, pic.POC)
					}
					for _, d := range out {
						if !unshown[d.Surface] || held[d.Surface] != d.POC {
							t.Errorf("shows surface %d as POC %d; it holds %d (shown already: %v)", d.Surface, d.POC, held[d.Surface], !unshown[d.Surface])
						}
						unshown[d.Surface] = false
					}
					shown = append(shown, out...)
				}
				shown = append(shown, p.Flush()...)
				if len(decoded) != len(want) {
					t.Errorf("%d pictures decoded, ffmpeg read %d", len(decoded), len(want))
				}
				if len(shown) != len(decoded) {
					t.Errorf("%d pictures shown of %d decoded", len(shown), len(decoded))
				}
				// Shown in POC order between IRAPs: each run of increasing POCs
				// is one coded video sequence, and holds each POC once.
				var runs [][]int32
				for i, d := range shown {
					if i == 0 || d.POC <= shown[i-1].POC {
						runs = append(runs, nil)
					}
					runs[len(runs)-1] = append(runs[len(runs)-1], d.POC)
				}
				total := 0
				for _, r := range runs {
					total += len(r)
				}
				idr := 0
				for _, w := range want {
					if w.nalType == 19 || w.nalType == 20 {
						idr++
					}
				}
				if len(runs) != idr {
					t.Errorf("shown in %d runs of rising POCs, the stream has %d IDR pictures: %v", len(runs), idr, fmt.Sprint(runs))
				}
				sorted := append([]int32(nil), decoded...)
				sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
				t.Logf("%d pictures, %d IDR, decoding order %v", len(decoded), idr, decoded[:min(20, len(decoded))])
			})
		}
	}
}

// A stream played twice, back to back (a looping source), shows every
// picture of both passes.
func TestParserLoops(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "nodes", "media", "es", "testdata", "hevc8.hevc"))
	if err != nil {
		t.Fatal(err)
	}
	aus := accessUnits(t, data)
	p := NewParser()
	shown, decoded := 0, 0
	for pass := 0; pass < 3; pass++ {
		for i, au := range aus {
			pics, out, err := p.Next(au, int64(pass*len(aus)+i))
			if err != nil {
				t.Fatalf("pass %d, access unit %d: %v", pass, i, err)
			}
			decoded += len(pics)
			shown += len(out)
		}
	}
	shown += len(p.Flush())
	if decoded != 3*len(aus) || shown != decoded {
		t.Errorf("%d access units a pass: %d decoded, %d shown in three passes", len(aus), decoded, shown)
	}
}

// BenchmarkParser reads a 1080p30 HEVC clip at 8 Mbit/s (ONAIR_BENCH_CLIP,
// e.g. .device/media/clip0.hevc from make seeds-bench; the committed
// 640x360 clip without it): CPU per access unit, against NVIDIA's parser's
// 103 µs (nodes/cuda/BENCHMARKS.md).
func BenchmarkParser(b *testing.B) {
	path := os.Getenv("ONAIR_BENCH_CLIP")
	if path == "" {
		path = filepath.Join("..", "..", "nodes", "media", "es", "testdata", "hevc8.hevc")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	t := &testing.T{}
	aus := accessUnits(t, data)
	p := NewParser()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		au := aus[i%len(aus)]
		if _, _, err := p.Next(au, int64(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/au")
}

// A picture's Data is its slice segments, each after a three-byte start
// code, and SliceOffsets where each starts, whether the parser searched the
// access unit or was told where its NAL units are, and whether the slices
// lay back to back in it (Data is then a slice of the access unit) or not
// (a four-byte start code between two of them: copied).
func TestPictureDataIsItsSlices(t *testing.T) {
	for name, path := range clips(t) {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			searched, told, spread := NewParser(), NewParser(), NewParser()
			for _, p := range []*Parser{searched, told, spread} {
				p.SetSurfaces(20)
			}
			aliased := 0
			for i, au := range accessUnits(t, data) {
				var want []byte
				var wantOffsets []uint32
				var nals []int32
				var wide []byte // au with every start code four bytes long
				nalUnits(au, nil, func(nal []byte, _, header int) error {
					nals = append(nals, int32(header))
					wide = append(append(wide, 0, 0, 0, 1), nal...)
					if typ := nal[0] >> 1 & 63; typ <= 9 || typ >= 16 && typ <= 21 {
						wantOffsets = append(wantOffsets, uint32(len(want)))
						want = append(append(want, 0, 0, 1), nal...)
					}
					return nil
				})
				for _, c := range []struct {
					p    *Parser
					au   []byte
					nals []int32
				}{{searched, au, nil}, {told, au, nals}, {spread, wide, nil}} {
					pics, _, err := c.p.NextNALs(c.au, c.nals, int64(i))
					if err != nil {
						t.Fatalf("access unit %d: %v", i, err)
					}
					for _, pic := range pics {
						if !bytes.Equal(pic.Data, want) || !slices.Equal(pic.SliceOffsets, wantOffsets) {
							t.Fatalf("access unit %d: Data %d bytes, slices at %v; want %d bytes, %v", i, len(pic.Data), pic.SliceOffsets, len(want), wantOffsets)
						}
						inside := len(pic.Data) > 0 && &pic.Data[0] != &c.au[0] && uintptr(unsafe.Pointer(&pic.Data[0]))-uintptr(unsafe.Pointer(&c.au[0])) < uintptr(len(c.au))
						if inside && c.p == spread && len(wantOffsets) > 1 {
							t.Errorf("access unit %d: slices apart in the access unit, yet Data is a slice of it", i)
						}
						if inside && c.p == told {
							aliased++
						}
					}
				}
			}
			if aliased == 0 {
				t.Errorf("no picture's Data was a slice of its access unit: every one was copied")
			}
		})
	}
}
