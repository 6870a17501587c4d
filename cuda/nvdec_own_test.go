package cuda

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/onairhq/onair/cuda/hevc"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media/es"
)

// ownClip is an HEVC clip the own parser is checked on.
type ownClip struct {
	name, path string
	format     frame.Format
	w, h       int
}

// ownClips are the committed HEVC clips and any given in
// $ONAIR_TEST_CLIPS (paths, comma or space separated: 1080p clips).
// accessUnits counts the pictures of an HEVC file.
func accessUnits(t testing.TB, path string) int {
	r, err := es.Open(path, es.HEVC)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		if _, err := r.Next(); err == io.EOF {
			return n
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		n++
	}
}

func ownClips(t testing.TB) []ownClip {
	var cs []ownClip
	for _, c := range nvdecClips {
		if c.codec == NVDECHEVC {
			cs = append(cs, ownClip{c.name, filepath.Join(nvdecMedia(), c.name), c.format, 640, 360})
		}
	}
	for _, p := range strings.FieldsFunc(os.Getenv("ONAIR_TEST_CLIPS"), func(r rune) bool { return r == ',' || r == ' ' }) {
		r, err := es.Open(p, es.HEVC)
		if err != nil {
			t.Fatal(err)
		}
		info, ok := r.Info()
		r.Close()
		if !ok {
			t.Fatalf("%s: no sequence parameter set", p)
		}
		f := frame.NV12
		if info.BitDepth > 8 {
			f = frame.P010
		}
		cs = append(cs, ownClip{filepath.Base(p), p, f, info.Width, info.Height})
	}
	return cs
}

// The own parser's decode path on the stand-in, with the committed HEVC
// clips: every picture is decoded once, into a surface no picture waiting
// for display holds, and shown once, in the order the parser outputs them
// (the stand-in numbers each picture by its place in decoding order).
func TestNVDECOwnParserWithAStandIn(t *testing.T) {
	n := useFakeNVDEC(t)
	loop, err := n.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		want    []int64 // decoding-order index of each picture shown, in display order
		got     []error
		frames  int
		decoded int64
		shown   map[int64]int
		end     error
		ended   bool
	}
	clips := ownClips(t)
	results := make([]*result, len(clips))
	for i, c := range clips {
		r, err := es.Open(c.path, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		res := &result{shown: map[int64]int{}}
		results[i] = res
		host, _ := frame.New(c.format, c.w, c.h)
		latest := map[int]int64{} // surface -> decoding index of the last picture decoded into it
		d, err := n.NewDecoder(NVDECConfig{
			ID: c.name, Codec: NVDECHEVC, Format: c.format, Width: c.w, Height: c.h, OwnParser: true, DisplayDelay: 2 * (i % 5), // 0 to 8, whatever ONAIR_TEST_CLIPS lists
			Source: esSource(r, 2),
			CaptureParams: func(p *hevc.Picture) {
				latest[p.CurrPicIdx] = p.Index
				res.decoded++
			},
			CaptureDisplay: func(surface int, poc int32, ts int64) {
				idx := latest[surface]
				res.want = append(res.want, idx)
				res.shown[idx]++
			},
			OnFrame: func(f *Frame, _ NVDECPicture) {
				defer f.Release()
				k := res.frames
				res.frames++
				if err := download(f, host); err != nil {
					res.got = append(res.got, err)
					return
				}
				if k >= len(res.want) {
					res.got = append(res.got, fmt.Errorf("frame %d came with no display", k))
					return
				}
				if err := checkToyPicture(host, int(res.want[k])); err != nil {
					res.got = append(res.got, fmt.Errorf("frame %d (picture %d in decoding order): %w", k, res.want[k], err))
				}
			},
			OnEnd: func(err error) { res.end, res.ended = err, true },
		})
		if err != nil {
			t.Fatal(err)
		}
		loop.Add(d)
	}
	if err := loop.Run(); err != nil {
		t.Fatal(err)
	}
	for i, c := range clips {
		res := results[i]
		if !res.ended || res.end != nil {
			t.Errorf("%s: ended %v: %v", c.name, res.ended, res.end)
		}
		for _, err := range res.got[:min(3, len(res.got))] {
			t.Errorf("%s: %v", c.name, err)
		}
		if n := 2 * accessUnits(t, c.path); res.frames != n || res.decoded != int64(n) || len(res.want) != n {
			t.Errorf("%s: %d pictures decoded, %d shown, %d frames; want %d of each (two passes)", c.name, res.decoded, len(res.want), res.frames, n)
		}
		for idx := int64(0); idx < res.decoded; idx++ {
			if res.shown[idx] != 1 {
				t.Errorf("%s: picture %d (decoding order) shown %d times", c.name, idx, res.shown[idx])
			}
		}
	}
}

// capturedPicture is a picture's parameters and the common part of its
// CUVIDPICPARAMS.
type capturedPicture struct {
	p      *hevc.Picture
	common nvdecCommon
}

// ownParse runs onair's parser over a clip's access units, as the decoder
// would: the pictures in decoding order (copied, in the shape the decoder
// hands the engine) and the POCs shown, in order.
func ownParse(t *testing.T, path string, surfaces int) ([]capturedPicture, []int32, hevc.Sequence) {
	r, err := es.Open(path, es.HEVC)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := hevc.NewParser()
	var pics []capturedPicture
	var shown []int32
	set := false
	for {
		au, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ps, out, err := p.Next(au.Data, au.Index)
		if err != nil {
			t.Fatalf("%s: access unit %d: %v", path, au.Index, err)
		}
		if !set {
			p.SetSurfaces(surfaces)
			set = true
		}
		for _, q := range ps {
			back, common := picParamsRoundTrip(q) // copies Data and SliceOffsets
			back.Index, back.Output, back.ChromaFormatIDC = q.Index, q.Output, q.ChromaFormatIDC
			pics = append(pics, capturedPicture{back, common})
		}
		for _, o := range out {
			shown = append(shown, o.POC)
		}
	}
	for _, o := range p.Flush() {
		shown = append(shown, o.POC)
	}
	seq, _ := p.Sequence()
	return pics, shown, seq
}

// refPOCs is a picture's reference pictures by POC: the set of the
// buffer's (long-term marked L), and each of the three lists.
func refPOCs(p *hevc.Picture) (set []string, before, after, lt []int32) {
	for i := range p.RefPicIdx {
		if p.RefPicIdx[i] >= 0 {
			s := fmt.Sprint(p.PicOrderCntVal[i])
			if p.IsLongTerm[i] != 0 {
				s += "L"
			}
			set = append(set, s)
		}
	}
	slices.Sort(set)
	list := func(idx [8]uint8, n int32) []int32 {
		var l []int32
		for j := 0; j < int(n) && j < 8; j++ {
			if k := idx[j]; k < 16 {
				l = append(l, p.PicOrderCntVal[k])
			} else {
				l = append(l, -1<<30)
			}
		}
		return l
	}
	return set, list(p.RefPicSetStCurrBefore, p.NumPocStCurrBefore), list(p.RefPicSetStCurrAfter, p.NumPocStCurrAfter), list(p.RefPicSetLtCurr, p.NumPocLtCurr)
}

// comparePictures lists how onair's picture differs from NVIDIA's: every
// field but the surfaces (references compared by POC), the bitstream as
// bytes.
func comparePictures(nv, own capturedPicture) []string {
	skip := map[string]bool{"CurrPicIdx": true, "RefPicIdx": true, "PicOrderCntVal": true, "IsLongTerm": true,
		"RefPicSetStCurrBefore": true, "RefPicSetStCurrAfter": true, "RefPicSetLtCurr": true,
		"Data": true, "SliceOffsets": true, "Output": true, "Index": true, "ChromaFormatIDC": true}
	diffs := pictureFields(nv.p, own.p, skip)
	if nv.common != own.common {
		diffs = append(diffs, fmt.Sprintf("common part: %+v vs %+v", nv.common, own.common))
	}
	s1, b1, a1, l1 := refPOCs(nv.p)
	s2, b2, a2, l2 := refPOCs(own.p)
	for _, c := range []struct {
		name string
		x, y any
	}{{"references (POCs)", s1, s2}, {"RefPicSetStCurrBefore (POCs)", b1, b2}, {"RefPicSetStCurrAfter (POCs)", a1, a2}, {"RefPicSetLtCurr (POCs)", l1, l2}} {
		if fmt.Sprint(c.x) != fmt.Sprint(c.y) {
			diffs = append(diffs, fmt.Sprintf("%s: %v vs %v", c.name, c.x, c.y))
		}
	}
	if !bytes.Equal(nv.p.Data, own.p.Data) {
		diffs = append(diffs, fmt.Sprintf("Data: %d bytes starting % x vs %d bytes starting % x", len(nv.p.Data), nv.p.Data[:min(12, len(nv.p.Data))], len(own.p.Data), own.p.Data[:min(12, len(own.p.Data))]))
	}
	if !slices.Equal(nv.p.SliceOffsets, own.p.SliceOffsets) {
		diffs = append(diffs, fmt.Sprintf("SliceOffsets: %v vs %v", nv.p.SliceOffsets, own.p.SliceOffsets))
	}
	return diffs
}

// TestNVDECOwnParserMatchesNVIDIAs: NVIDIA's parser decodes each HEVC clip
// with its picture parameters captured; onair's parser reads the same
// access units; the two must agree picture by picture in decoding order
// (every field but the surfaces: the references compared by POC; the
// bitstream byte for byte) and show the same POCs in the same order.
func TestNVDECOwnParserMatchesNVIDIAs(t *testing.T) {
	n := openNVDEC(t)
	defer n.Close()
	for _, c := range ownClips(t) {
		t.Run(c.name, func(t *testing.T) {
			r, err := es.Open(c.path, es.HEVC)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			loop, err := n.NewLoop()
			if err != nil {
				t.Fatal(err)
			}
			var nv []capturedPicture
			var nvShown []int32
			var end error
			var mu sync.Mutex
			d, err := n.NewDecoder(NVDECConfig{
				ID: c.name, Codec: NVDECHEVC, Format: c.format, Width: c.w, Height: c.h, Source: esSource(r, 1),
				CaptureParams:  func(p *hevc.Picture) { nv[len(nv)-1].p = p },
				CaptureDisplay: func(_ int, poc int32, ts int64) { nvShown = append(nvShown, poc) },
				OnFrame:        func(f *Frame, _ NVDECPicture) { f.Release() },
				OnEnd:          func(err error) { mu.Lock(); end = err; mu.Unlock() },
			})
			if err != nil {
				t.Fatal(err)
			}
			d.onCommon = func(c nvdecCommon) { nv = append(nv, capturedPicture{common: c}) }
			loop.Add(d)
			var minSurf, created int
			// The loop frees its decoders as it ends: read the surfaces on
			// the way, at the first display.
			prev := d.cfg.CaptureDisplay
			d.cfg.CaptureDisplay = func(surface int, poc int32, ts int64) {
				if created == 0 {
					minSurf, created = d.Surfaces()
				}
				prev(surface, poc, ts)
			}
			if err := loop.Run(); err != nil {
				t.Fatal(err)
			}
			if end != nil {
				t.Fatal(end)
			}
			own, ownShown, seq := ownParse(t, c.path, created)
			t.Logf("NVIDIA's parser: min_num_decode_surfaces %d (%d created); onair's SPS: MaxDecPicBuffering %d, MaxNumReorderPics %d (onair asks for MaxDecPicBuffering+%d = %d)",
				minSurf, created, seq.MaxDecPicBuffering, seq.MaxNumReorderPics, ownSurfacesOverDPB, seq.MaxDecPicBuffering+ownSurfacesOverDPB)
			if len(nv) > 0 && len(nv[0].p.SliceOffsets) > 0 {
				o := nv[0].p.SliceOffsets[0]
				t.Logf("NVIDIA's bitstream of picture 0: %d bytes, %d slices at %v, starting % x",
					len(nv[0].p.Data), len(nv[0].p.SliceOffsets), nv[0].p.SliceOffsets, nv[0].p.Data[o:min(int(o)+8, len(nv[0].p.Data))])
			}
			// Every differing field is shown, its first three pictures and
			// how many: one field that differs everywhere hides no other.
			bad := 0
			perField := map[string]int{}
			for i := 0; i < max(len(nv), len(own)); i++ {
				if i >= len(nv) || i >= len(own) {
					t.Errorf("NVIDIA's parser decoded %d pictures, onair's %d", len(nv), len(own))
					break
				}
				for _, diff := range comparePictures(nv[i], own[i]) {
					field, _, _ := strings.Cut(diff, ":")
					if perField[field] < 3 {
						t.Logf("picture %d (POC %d): %s (NVIDIA's vs onair's)", i, nv[i].p.CurrPicOrderCntVal, diff)
					}
					perField[field]++
					bad++
				}
			}
			for f, n := range perField {
				t.Logf("%s differs on %d of %d pictures", f, n, len(nv))
			}
			if bad > 0 {
				t.Errorf("%d differences in the picture parameters", bad)
			}
			if !slices.Equal(nvShown, ownShown) {
				t.Errorf("display order (POCs):\nNVIDIA's %v\nonair's  %v", nvShown, ownShown)
			}
		})
	}
}

// TestNVDECOwnParserIsByteExact is TestNVDECIsByteExact for the HEVC clips
// decoded through onair's parser (OwnParser).
func TestNVDECOwnParserIsByteExact(t *testing.T) {
	nvdecByteExact(t, true)
}

// Feeding a picture through onair's parser allocates nothing once the
// parser's and the decoder's buffers have grown.
func TestNVDECOwnParserAllocatesNothing(t *testing.T) {
	n := useFakeNVDEC(t)
	r, err := es.Open(filepath.Join(nvdecMedia(), "hevc8.hevc"), es.HEVC)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var aus []es.AccessUnit
	for {
		au, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		aus = append(aus, es.AccessUnit{Data: bytes.Clone(au.Data), NALs: slices.Clone(au.NALs)})
	}
	i := 0
	d, err := n.NewDecoder(NVDECConfig{ID: "allocs", Codec: NVDECHEVC, Format: frame.NV12, Width: 640, Height: 360, OwnParser: true,
		Source: func() (NVDECUnit, error) {
			au := aus[i%len(aus)]
			i++
			return NVDECUnit{Data: au.Data, NALs: au.NALs, Timestamp: int64(i)}, nil
		},
		OnFrame: func(f *Frame, _ NVDECPicture) { f.Release() }})
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	feed := func() {
		if _, err := d.feed(); err != nil {
			t.Fatal(err)
		}
		d.c.qhead, d.c.qlen = 0, 0 // shown
	}
	for range 3 * len(aus) { // a few passes: every buffer at its size
		feed()
	}
	if a := testing.AllocsPerRun(2*len(aus), feed); a != 0 {
		t.Errorf("%.2f allocations a picture", a)
	}
}

// TestNVDECOwnParserDecodesAsNVIDIAs: every clip (the committed ones and
// ONAIR_TEST_CLIPS: a 1080p clip, open GOPs, slices, scaling lists, ...)
// decoded twice on one loop, through NVIDIA's parser and through onair's,
// over two passes with display delay 2: the same pictures, byte for byte,
// in the same order. NVIDIA's path is byte-exact against ffmpeg
// (TestNVDECIsByteExact), so this holds onair's to ffmpeg's too, for
// streams without a committed reference.
func TestNVDECOwnParserDecodesAsNVIDIAs(t *testing.T) {
	n := openNVDEC(t)
	defer n.Close()
	for _, c := range ownClips(t) {
		t.Run(c.name, func(t *testing.T) {
			loop, err := n.NewLoop()
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			sums := [2][]string{}
			ends := [2]error{}
			for k, own := range []bool{false, true} {
				r, err := es.Open(c.path, es.HEVC)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				host, _ := frame.New(c.format, c.w, c.h)
				d, err := n.NewDecoder(NVDECConfig{
					ID: fmt.Sprintf("%s/own=%v", c.name, own), Codec: NVDECHEVC, Format: c.format, Width: c.w, Height: c.h,
					Source: esSource(r, 2), DisplayDelay: 2, OwnParser: own,
					OnFrame: frameSums(t, host, &mu, &sums[k]),
					OnEnd:   func(err error) { mu.Lock(); ends[k] = err; mu.Unlock() },
				})
				if err != nil {
					t.Fatal(err)
				}
				loop.Add(d)
			}
			if err := loop.Run(); err != nil {
				t.Fatal(err)
			}
			for k, e := range ends {
				if e != nil {
					t.Errorf("parser %d ended: %v", k, e)
				}
			}
			nv, own := sums[0], sums[1]
			if len(nv) == 0 || len(own) != len(nv) {
				t.Fatalf("NVIDIA's parser gave %d pictures, onair's %d", len(nv), len(own))
			}
			bad := 0
			for i := range nv {
				if nv[i] != own[i] {
					if bad < 5 {
						t.Errorf("picture %d of %d (display order): onair's %s, NVIDIA's %s", i, len(nv), own[i], nv[i])
					}
					bad++
				}
			}
			t.Logf("%d pictures, %d differ", len(nv), bad)
		})
	}
}
