package media_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	. "github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/mediatest"
)

// writeRaw writes n frames of pattern p (frame i stamped with number i) as a
// raw file and returns their bytes.
func writeRaw(t *testing.T, path string, f frame.Format, w, h, n int) [][]byte {
	t.Helper()
	var all []byte
	var frames [][]byte
	for i := 0; i < n; i++ {
		fr, _ := mediatest.PatternFrame(f, Bars, w, h, 1, i)
		frames = append(frames, append([]byte(nil), fr.Bytes()...))
		all = append(all, fr.Bytes()...)
	}
	if err := os.WriteFile(path, all, 0o644); err != nil {
		t.Fatal(err)
	}
	return frames
}

func openRaw(t *testing.T, cfg RawFileConfig) (*RawFile, *frame.Frame) {
	t.Helper()
	cfg.Rate = frame.Rational{Num: 30, Den: 1}
	r, err := OpenRawFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	p, _ := frame.NewPool(cfg.Format, cfg.Width, cfg.Height, 1)
	fr, _ := p.Get()
	return r, fr
}

func TestRawFileByteExactAndLoopTimestamps(t *testing.T) {
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		for _, resident := range []bool{false, true} {
			path := filepath.Join(t.TempDir(), "clip."+f.String())
			want := writeRaw(t, path, f, 64, 48, 3)
			r, fr := openRaw(t, RawFileConfig{ID: "vt", Path: path, Format: f, Width: 64, Height: 48, Loop: true, Resident: resident})
			for n := 0; n < 8; n++ {
				if err := r.Next(fr); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(fr.Bytes(), want[n%3]) {
					t.Errorf("%v resident=%v: frame %d is not file frame %d byte for byte", f, resident, n, n%3)
				}
				if fr.PTS != int64(n) || fr.SourceFrame != int64(n) || fr.TimeBase != (frame.Rational{Num: 1, Den: 30}) || fr.Source != "vt" || fr.Colour != frame.BT709 {
					t.Errorf("%v: frame %d metadata PTS %d n %d tb %v src %q colour %v", f, n, fr.PTS, fr.SourceFrame, fr.TimeBase, fr.Source, fr.Colour)
				}
				if _, stampN, ok := ReadStamp(fr, frame.Rect{X: 0, Y: 0, W: 64, H: 48}); !ok || stampN != uint32(n%3) {
					t.Errorf("%v: frame %d shows stamp %d ok %v, want file frame %d", f, n, stampN, ok, n%3)
				}
			}
		}
	}
}

func TestRawFileEndWithoutLoop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clip.nv12")
	writeRaw(t, path, frame.NV12, 64, 48, 2)
	r, fr := openRaw(t, RawFileConfig{Path: path, Format: frame.NV12, Width: 64, Height: 48})
	for i := 0; i < 2; i++ {
		if err := r.Next(fr); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Next(fr); err != io.EOF {
		t.Errorf("after the last frame Next = %v, want io.EOF", err)
	}
}

func TestRawFileEndsInsideAFrame(t *testing.T) {
	const size = 64 * 48 * 3 / 2
	for _, tc := range []struct {
		name   string
		loop   bool
		reads  int
		offset string
	}{
		{"partial last frame", false, 2, "offset 5608"}, // frame 1 at 4608, 1000 bytes there
		{"partial last frame while looping", true, 2, "offset 5608"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cut.nv12")
			writeRaw(t, path, frame.NV12, 64, 48, 2)
			if err := os.Truncate(path, size+1000); err != nil {
				t.Fatal(err)
			}
			r, fr := openRaw(t, RawFileConfig{Path: path, Format: frame.NV12, Width: 64, Height: 48, Loop: tc.loop})
			var err error
			for i := 0; i < tc.reads && err == nil; i++ {
				err = r.Next(fr)
			}
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.offset) || !strings.Contains(err.Error(), "ends inside frame 1") {
				t.Errorf("error = %v, want one naming %s, frame 1 and %s", err, path, tc.offset)
			}
			if again := r.Next(fr); again == nil || again.Error() != err.Error() {
				t.Errorf("after the error Next = %v, want the same error: the source has stopped", again)
			}
		})
	}
	t.Run("truncated after open", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "shrinks.nv12")
		writeRaw(t, path, frame.NV12, 64, 48, 3)
		r, fr := openRaw(t, RawFileConfig{Path: path, Format: frame.NV12, Width: 64, Height: 48, Loop: true})
		r.Next(fr)
		os.Truncate(path, 2*size-10)
		r.Next(fr)
		if err := r.Next(fr); err == nil || !strings.Contains(err.Error(), "offset 9206") {
			t.Errorf("error = %v, want the file ending inside frame 1 at offset 9206", err)
		}
	})
	t.Run("shorter than a frame", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "tiny.nv12")
		os.WriteFile(path, make([]byte, 100), 0o644)
		_, err := OpenRawFile(RawFileConfig{Path: path, Format: frame.NV12, Width: 64, Height: 48, Rate: frame.Rational{Num: 30, Den: 1}})
		if err == nil || !strings.Contains(err.Error(), "less than one") {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, err := OpenRawFile(RawFileConfig{Path: "/nonexistent/x.nv12", Format: frame.NV12, Width: 64, Height: 48, Rate: frame.Rational{Num: 30, Den: 1}})
		if err == nil || !strings.Contains(err.Error(), "/nonexistent/x.nv12") {
			t.Errorf("error = %v", err)
		}
	})
}

// rewriteFrame overwrites frame i of a raw file in place with frame number
// `as` of the pattern.
func rewriteFrame(t *testing.T, path string, f frame.Format, w, h, i, as int) {
	t.Helper()
	fr, _ := mediatest.PatternFrame(f, Checker, w, h, 9, as)
	file, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := file.WriteAt(fr.Bytes(), int64(i*len(fr.Bytes()))); err != nil {
		t.Fatal(err)
	}
	file.Close()
}

func TestRawFileRewrittenFrameShowsOnALaterPass(t *testing.T) {
	for _, resident := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "live.nv12")
		writeRaw(t, path, frame.NV12, 64, 48, 3)
		r, fr := openRaw(t, RawFileConfig{Path: path, Format: frame.NV12, Width: 64, Height: 48, Loop: true, Resident: resident})
		stamp := func() (uint16, uint32) {
			t.Helper()
			if err := r.Next(fr); err != nil {
				t.Fatal(err)
			}
			id, n, _ := ReadStamp(fr, frame.Rect{X: 0, Y: 0, W: 64, H: 48})
			return id, n
		}
		stamp()
		stamp() // frames 0, 1 of pass 1 shown
		// Make sure the modification time moves even on a coarse clock.
		time.Sleep(10 * time.Millisecond)
		rewriteFrame(t, path, frame.NV12, 64, 48, 1, 777)
		stamp() // frame 2 of pass 1
		stamp() // frame 0 of pass 2
		if id, n := stamp(); id != 9 || n != 777 {
			t.Errorf("resident=%v: frame 1 on the second pass shows %d/%d, want the rewritten 9/777", resident, id, n)
		}
	}
}

// TestRawFileResidentReadsFromMemory shows that resident mode keeps the
// pictures: a rewrite that leaves the modification time as it was is not
// seen, and one that changes it is, from the next pass.
func TestRawFileResidentReadsFromMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kept.nv12")
	writeRaw(t, path, frame.NV12, 64, 48, 2)
	r, fr := openRaw(t, RawFileConfig{Path: path, Format: frame.NV12, Width: 64, Height: 48, Loop: true, Resident: true})
	next := func() uint32 {
		t.Helper()
		if err := r.Next(fr); err != nil {
			t.Fatal(err)
		}
		_, n, _ := ReadStamp(fr, frame.Rect{X: 0, Y: 0, W: 64, H: 48})
		return n
	}
	next()
	next() // both pictures now kept
	st, _ := os.Stat(path)
	rewriteFrame(t, path, frame.NV12, 64, 48, 0, 555)
	os.Chtimes(path, st.ModTime(), st.ModTime())
	if n := next(); n != 0 {
		t.Errorf("same mtime: pass 2 shows %d, want the kept picture 0", n)
	}
	next()
	later := st.ModTime().Add(time.Second)
	os.Chtimes(path, later, later)
	if n := next(); n != 555 {
		t.Errorf("new mtime: pass 3 shows %d, want the re-read picture 555", n)
	}
	if r.Reloads() != 1 {
		t.Errorf("reloads = %d, want 1", r.Reloads())
	}
}

// BenchmarkRawFile reads 1080p NV12 frames with pread (direct) and from
// memory (resident); allocs/op must be 0.
func BenchmarkRawFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.nv12")
	fr, _ := frame.New(frame.NV12, 1920, 1080)
	data := bytes.Repeat(fr.Bytes(), 4)
	os.WriteFile(path, data, 0o644)
	for _, resident := range []bool{false, true} {
		name := "direct"
		if resident {
			name = "resident"
		}
		b.Run(name, func(b *testing.B) {
			r, err := OpenRawFile(RawFileConfig{Path: path, Format: frame.NV12, Width: 1920, Height: 1080, Rate: frame.Rational{Num: 30, Den: 1}, Loop: true, Resident: resident})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			for i := 0; i < 4; i++ {
				r.Next(fr)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(fr.Bytes())))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := r.Next(fr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
