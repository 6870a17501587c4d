package show

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/onairhq/onair/nodes/media"
)

// syncCounting is an as-run file that counts its fsyncs.
type syncCounting struct {
	*os.File
	syncs *atomic.Int64
}

func (f syncCounting) Sync() error {
	f.syncs.Add(1)
	return f.File.Sync()
}

// The as-run log's fsync policy: "line" fsyncs after every line written,
// "second" (the default) once a second while lines come and at the end;
// any other is refused, naming the choices.
func TestAsRunFsyncPolicy(t *testing.T) {
	for _, c := range []struct {
		fsync    string
		min, max int64
	}{
		{"line", 20, 21}, // every line, and the close
		{"second", 1, 3}, // the close, and a second or two of lines on a slow machine
	} {
		var syncs atomic.Int64
		open := func(name string, flag int, perm os.FileMode) (media.RecordFile, error) {
			f, err := os.OpenFile(name, flag, perm)
			if err != nil {
				return nil, err
			}
			return syncCounting{File: f, syncs: &syncs}, nil
		}
		a, err := OpenAsRun(filepath.Join(t.TempDir(), "as-run.jsonl"), c.fsync, open, nil)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			a.Record(AsRunLine{Event: "switch_asked", Bus: "bus.pgm"})
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if n := syncs.Load(); n < c.min || n > c.max || a.Status().Lines != 20 {
			t.Errorf("fsync %s: %d fsyncs for %d lines, want %d to %d for 20", c.fsync, n, a.Status().Lines, c.min, c.max)
		}
	}
	if _, err := OpenAsRun(filepath.Join(t.TempDir(), "x.jsonl"), "often", nil, nil); err == nil || err.Error() != `as-run log: fsync "often": give one of second, line` {
		t.Errorf("fsync often: %v", err)
	}
}
