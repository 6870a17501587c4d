package show

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/mediatest"
)

// TestRecordOutputOnAFullDisk drives a record output's sink on a disk that
// fills up, with a clock the test moves: nothing written before the error
// is lost, every frame not written is a drop, reopening backs off from
// 250 ms doubling to 8 s and counts restarts, and the summary's frames are
// the file's, whole frames only.
func TestRecordOutputOnAFullDisk(t *testing.T) {
	const w, h = 64, 48
	path := filepath.Join(t.TempDir(), "pgm.y4m")
	os.WriteFile(path, []byte("an earlier run's recording"), 0o644)
	frameLen := int64(6 + frame.NV12.Size(w, h))
	hdr := int64(len("YUV4MPEG2 W64 H48 F30:1 Ip A1:1 C420jpeg\n"))
	disk := mediatest.NewSmallDisk(hdr + 10*frameLen + frameLen/3)
	now := time.Unix(1000, 0)
	st := &OutputState{Address: "output.pgm", Kind: "record"}
	r := &recorder{path: path, format: frame.NV12, width: w, height: h, rate: frame.Rational{Num: 30, Den: 1},
		st: st, open: disk.Open, now: func() time.Time { return now }}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := r.start(log); err != nil {
		t.Fatal(err)
	}
	s := &sink[*frame.Frame]{st: st, toHost: func(f *frame.Frame) (*frame.Frame, func(), error) { return f, func() {}, nil }, write: r.write, close: r.close}
	var sent [][]byte
	put := func() {
		t.Helper()
		f, err := mediatest.PatternFrame(frame.NV12, media.Ramp, w, h, 3, len(sent))
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, append([]byte(nil), f.Bytes()...))
		if err := s.writeOne(f); err != nil {
			t.Fatalf("frame %d failed the node: %v", len(sent)-1, err)
		}
	}
	check := func(written, drops, restarts uint64) {
		t.Helper()
		o := summarise(st)
		if o.Written != written || o.Drops != drops || o.Restarts != restarts {
			t.Fatalf("after %d frames: %d written, %d drops, %d restarts; want %d, %d, %d (last error %q)",
				len(sent), o.Written, o.Drops, o.Restarts, written, drops, restarts, o.LastError)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() != hdr+int64(written)*frameLen {
			t.Fatalf("the file holds %d bytes, not the header and %d whole frames", fi.Size(), written)
		}
	}
	for i := 0; i < 10; i++ {
		put()
	}
	check(10, 0, 0)
	put() // the disk fills inside frame 10
	check(10, 1, 0)
	if e := summarise(st).LastError; !strings.Contains(e, "disk is full") || !strings.Contains(e, path) || !strings.Contains(e, "250ms") {
		t.Errorf("last error %q: want the full disk, the file and the wait", e)
	}
	for i := 0; i < 5; i++ { // while it waits, frames are dropped without a try
		put()
	}
	check(10, 6, 0)
	// Each try on the still full disk doubles the wait, up to 8 s.
	drops, restarts := uint64(6), uint64(0)
	for _, wait := range []time.Duration{250, 500, 1000, 2000, 4000, 8000, 8000} {
		now = now.Add(wait*time.Millisecond - time.Millisecond)
		put()
		drops++
		check(10, drops, restarts)
		now = now.Add(time.Millisecond)
		put()
		drops, restarts = drops+1, restarts+1
		check(10, drops, restarts)
	}
	// Room again: the next try continues the file.
	disk.SetFree(1 << 30)
	now = now.Add(8 * time.Second)
	put()
	check(11, drops, restarts+1)
	for i := 0; i < 4; i++ {
		put()
	}
	check(15, drops, restarts+1)
	if r.wait != 0 {
		t.Errorf("writing again, the wait is still %v", r.wait)
	}
	// A group restart continues the file too.
	s.closeOutput()
	if err := r.start(log); err != nil {
		t.Fatal(err)
	}
	put()
	s.closeOutput()
	check(16, drops, restarts+2)

	// The file holds the frames counted as written, in order: the first
	// ten (from before the disk filled) and those after it.
	y, err := media.OpenY4M(path, "back", false)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	var got [][]byte
	for {
		f, _ := frame.New(frame.NV12, w, h)
		if y.Next(f) != nil {
			break
		}
		got = append(got, f.Bytes())
	}
	if uint64(len(got)) != summarise(st).Written || uint64(len(got))+summarise(st).Drops != uint64(len(sent)) {
		t.Fatalf("the file holds %d frames; the output counted %d written and %d drops of %d", len(got), summarise(st).Written, summarise(st).Drops, len(sent))
	}
	for i := 0; i < 10; i++ {
		if !bytes.Equal(got[i], sent[i]) {
			t.Fatalf("frame %d, written before the disk filled, changed", i)
		}
	}
	if !bytes.Equal(got[10], sent[len(sent)-6]) || !bytes.Equal(got[15], sent[len(sent)-1]) {
		t.Error("the frames after the disk had room again are not the ones sent then")
	}
}

// summarise reads one output as State.Summary does.
func summarise(o *OutputState) OutputSummary {
	b := &State{outputs: map[string]*OutputState{o.Address: o}}
	return b.Summary().Outputs[0]
}
