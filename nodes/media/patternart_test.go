package media_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media"
)

// ArtFrames are the frames the art tests cut: the first last+1 (at 30 fps
// a flash every 30, the stamp's frame number through its low bits), the
// frames around the point where Bars and Ramp slide a whole picture width
// and start again, and frames past the stamp's 24-bit counter.
func ArtFrames(w int, last int64) []int64 {
	var ns []int64
	for n := int64(0); n <= last; n++ {
		ns = append(ns, n)
	}
	wrap := int64(w / 4)
	for n := wrap - 3; n <= wrap+3; n++ {
		if n > last {
			ns = append(ns, n)
		}
	}
	return append(ns, 1<<24-1, 1<<24, 1<<24+31)
}

func toneAt30(t *testing.T) *audio.Tone {
	cad, err := audio.NewCadence(30, 1)
	if err != nil {
		t.Fatal(err)
	}
	tone, err := audio.NewTone(1000, -18, cad)
	if err != nil {
		t.Fatal(err)
	}
	return &tone
}

// TestArtCutsNextsPictures: a picture laid from the pattern's art, piece
// by piece as the CUDA backend's copies lay it, over a picture of garbage,
// is byte for byte what Next draws, for every pattern in both formats, at
// 1080p, at 640x360, at the smallest size and at one whose width is no
// multiple of 4, through flashes, a slide's wrap and the stamp counter's;
// NextMeta stamps what Next stamps, sound included.
func TestArtCutsNextsPictures(t *testing.T) {
	tone := toneAt30(t)
	sizes := [][2]int{{1920, 1080}, {640, 360}, {32, 32}, {66, 34}}
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		for _, p := range []media.Pattern{media.Bars, media.Ramp, media.Solid, media.Checker} {
			for _, sz := range sizes {
				for _, noStamp := range []bool{false, true} {
					if noStamp && sz[0] != 640 {
						continue
					}
					name := fmt.Sprintf("%v/%v/%dx%d", f, p, sz[0], sz[1])
					if noStamp {
						name += "/nostamp"
					}
					t.Run(name, func(t *testing.T) {
						cfg := media.TestPatternConfig{ID: "source.tp", StampID: 513, Pattern: p, Format: f, Width: sz[0], Height: sz[1],
							Rate: frame.Rational{Num: 30, Den: 1}, Solid: [3]uint8{81, 90, 240}, NoStamp: noStamp, Tone: tone}
						last := int64(130)
						if sz[0] == 1920 {
							last = 61 // the 1080p frames cost most
						}
						artsMatchNext(t, cfg, ArtFrames(sz[0], last))
					})
				}
			}
		}
	}
}

func artsMatchNext(t *testing.T, cfg media.TestPatternConfig, ns []int64) {
	t.Helper()
	ref, err := media.NewTestPattern(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cut, _ := media.NewTestPattern(cfg)
	art, err := cut.NewArt()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := frame.New(cfg.Format, cfg.Width, cfg.Height)
	got, _ := frame.New(cfg.Format, cfg.Width, cfg.Height)
	var pieces []media.Piece
	flashes := 0
	for _, n := range ns {
		ref.SetNext(n)
		if err := ref.Next(want); err != nil {
			t.Fatal(err)
		}
		for i := range got.Bytes() {
			got.Bytes()[i] = 0xa7 // what no piece covers shows
		}
		cut.SetNext(n)
		var m frame.Meta
		if got := cut.NextMeta(&m); got != n {
			t.Fatalf("NextMeta numbered frame %d, want %d", got, n)
		}
		var under int
		pieces, under = cut.Pieces(pieces[:0], n)
		if cut.Flashes(n) {
			flashes++
			if under == len(pieces) {
				t.Fatalf("frame %d flashes and has no piece over the others", n)
			}
		}
		art.Cut(got, pieces)
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("frame %d: the cut picture differs from Next's at byte %d of %d", n, firstDiff(got.Bytes(), want.Bytes()), len(want.Bytes()))
		}
		if !reflect.DeepEqual(m, want.Meta) {
			t.Fatalf("frame %d: NextMeta stamped %+v, Next %+v", n, m, want.Meta)
		}
		if next, _ := cut.Pieces(nil, n); !overlapFree(next[:under]) {
			t.Fatalf("frame %d: the first %d pieces overlap", n, under)
		}
	}
	if flashes < 3 {
		t.Fatalf("%d frames flashed, want at least 3", flashes)
	}
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// overlapFree reports whether no two pieces write the same samples.
func overlapFree(ps []media.Piece) bool {
	for i, a := range ps {
		for _, b := range ps[i+1:] {
			if a.Plane == b.Plane && a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H {
				return false
			}
		}
	}
	return true
}

// TestArtWindowsStayInTheBase: the art of a 1080p pattern is at most three pictures,
// and Window stays inside its Base for every frame of a slide's cycle.
func TestArtWindowsStayInTheBase(t *testing.T) {
	for _, p := range []media.Pattern{media.Bars, media.Ramp, media.Solid, media.Checker} {
		tp, err := media.NewTestPattern(media.TestPatternConfig{ID: "x", Pattern: p, Width: 1920, Height: 1080, Rate: frame.Rational{Num: 30, Den: 1}})
		if err != nil {
			t.Fatal(err)
		}
		art, err := tp.NewArt()
		if err != nil {
			t.Fatal(err)
		}
		if size := art.Base.Width*art.Base.Height + art.Ink.Width*art.Ink.Height; size > 3*1920*1080 {
			t.Errorf("%v: art of %d samples of luma, over three pictures", p, size)
		}
		for n := int64(0); n < 1920; n++ {
			lx, ly, cx, cy := tp.Window(n)
			if lx < 0 || ly < 0 || lx+1920 > art.Base.Width || ly+1080 > art.Base.Height || cx+1920 > art.Base.Width || cy+540 > art.Base.Height/2 || cx%2 != 0 {
				t.Fatalf("%v: frame %d's window (%d,%d) (%d,%d) leaves the %dx%d base", p, n, lx, ly, cx, cy, art.Base.Width, art.Base.Height)
			}
		}
	}
}
