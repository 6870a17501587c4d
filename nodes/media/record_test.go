package media_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/onairhq/onair/frame"
	. "github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/mediatest"
)

var rate30 = frame.Rational{Num: 30, Den: 1}

// readBack returns the pictures of a Y4M file and checks that it ends
// after its last whole frame.
func readBack(t *testing.T, path string, w, h int) [][]byte {
	t.Helper()
	y, err := OpenY4M(path, "back", false)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	var out [][]byte
	for {
		f, _ := frame.New(frame.NV12, w, h)
		if err := y.Next(f); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("%s after %d frames: %v", path, len(out), err)
			}
			return out
		}
		out = append(out, append([]byte(nil), f.Bytes()...))
	}
}

// TestRecordOnAFullDiskKeepsWholeFrames: a write that runs out of room
// fails, the file ends after the last whole frame, Frames counts exactly
// those, and a continued Record appends after them once there is room.
func TestRecordOnAFullDiskKeepsWholeFrames(t *testing.T) {
	const w, h = 64, 48
	path := filepath.Join(t.TempDir(), "full.y4m")
	frameLen := int64(6 + frame.NV12.Size(w, h))
	hdr := int64(len("YUV4MPEG2 W64 H48 F30:1 Ip A1:1 C420jpeg\n"))
	disk := mediatest.NewSmallDisk(hdr + 3*frameLen + frameLen/2) // room for 3.5 frames
	rec, err := OpenRecord(path, frame.NV12, w, h, rate30, RecordOptions{Open: disk.Open})
	if err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	for i := 0; i < 4; i++ {
		f, _ := mediatest.PatternFrame(frame.NV12, Ramp, w, h, 5, i)
		err := rec.Write(f)
		if i < 3 {
			if err != nil {
				t.Fatalf("frame %d: %v", i, err)
			}
			want = append(want, f.Bytes())
			continue
		}
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) {
			t.Fatalf("the fourth frame on a disk with room for 3.5: %v, want ENOSPC naming the file", err)
		}
	}
	if st, _ := os.Stat(path); st.Size() != hdr+3*frameLen || rec.Frames() != 3 {
		t.Fatalf("after the failed write the file holds %d bytes and the record counts %d frames; want %d bytes, 3 frames", st.Size(), rec.Frames(), hdr+3*frameLen)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	// Room again: a continued record carries on after frame 3.
	disk.SetFree(1 << 30)
	rec, err = OpenRecord(path, frame.NV12, w, h, rate30, RecordOptions{Continue: true, Open: disk.Open})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Frames() != 3 || rec.Cut() != 0 {
		t.Fatalf("continued: %d frames, %d bytes cut; want 3, 0", rec.Frames(), rec.Cut())
	}
	for i := 3; i < 5; i++ {
		f, _ := mediatest.PatternFrame(frame.NV12, Ramp, w, h, 5, i)
		if err := rec.Write(f); err != nil {
			t.Fatal(err)
		}
		want = append(want, f.Bytes())
	}
	rec.Close()
	got := readBack(t, path, w, h)
	if len(got) != len(want) {
		t.Fatalf("read back %d frames, wrote %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("frame %d differs from what was written", i)
		}
	}
}

// TestRecordContinueCutsAPartialFrame: a file that ends inside a frame (a
// process killed mid-write) is continued after its last whole frame.
func TestRecordContinueCutsAPartialFrame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cut.y4m")
	if _, err := mediatest.RecordPattern(path, frame.NV12, Bars, 64, 48, 1, 2); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte("FRAME\n\x10\x10\x10"))
	f.Close()
	rec, err := OpenRecord(path, frame.NV12, 64, 48, rate30, RecordOptions{Continue: true})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Frames() != 2 || rec.Cut() != 9 {
		t.Fatalf("continued: %d frames, %d bytes cut; want 2 and 9", rec.Frames(), rec.Cut())
	}
	fr, _ := mediatest.PatternFrame(frame.NV12, Bars, 64, 48, 1, 2)
	rec.Write(fr)
	rec.Close()
	if n := len(readBack(t, path, 64, 48)); n != 3 {
		t.Fatalf("%d frames after continuing, want 3", n)
	}
}

// TestRecordContinueLeavesOtherFilesAlone: Continue never cuts a file that
// holds another stream or something else entirely.
func TestRecordContinueLeavesOtherFilesAlone(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.y4m")
	mediatest.RecordPattern(other, frame.NV12, Bars, 32, 32, 1, 2)
	text := filepath.Join(dir, "notes.y4m")
	os.WriteFile(text, []byte("not a video at all, but somebody's notes\n"), 0o644)
	for _, p := range []string{other, text} {
		before, _ := os.ReadFile(p)
		_, err := OpenRecord(p, frame.NV12, 64, 48, rate30, RecordOptions{Continue: true})
		if err == nil || !strings.Contains(err.Error(), "left as it is") {
			t.Errorf("%s: %v, want a refusal", p, err)
		}
		if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
			t.Errorf("%s was changed", p)
		}
	}
	// A header cut short by a full disk is started again.
	short := filepath.Join(dir, "short.y4m")
	os.WriteFile(short, []byte("YUV4MPEG2 W64 H4"), 0o644)
	rec, err := OpenRecord(short, frame.NV12, 64, 48, rate30, RecordOptions{Continue: true})
	if err != nil {
		t.Fatal(err)
	}
	fr, _ := mediatest.PatternFrame(frame.NV12, Bars, 64, 48, 1, 0)
	rec.Write(fr)
	rec.Close()
	if n := len(readBack(t, short, 64, 48)); n != 1 {
		t.Fatalf("%d frames, want 1", n)
	}
}
