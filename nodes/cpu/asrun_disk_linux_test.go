package cpu

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/onairhq/onair/nodes/show"
)

// smallTmpfs mounts a tmpfs of size bytes in a new directory, unmounted
// when the test ends; the test is skipped where mounting is not allowed
// (not root, or a container without the capability).
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("mounting a %s tmpfs for a full disk: %v (needs root)", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// TestAsRunOnARealFullDisk writes the as-run log onto a real filesystem
// that fills up (an 8 KiB tmpfs, a page of it taken by another file): a
// line that crosses the last free byte may land in part (a short write)
// and is cut off again, later lines are refused (ENOSPC); each is counted lost
// with the error while the show stays on air, and the file holds whole
// lines only. Once the other file is gone, the next switch's lines are
// written.
func TestAsRunOnARealFullDisk(t *testing.T) {
	disk := smallTmpfs(t, "8k")
	filler := filepath.Join(disk, "filler")
	if err := os.WriteFile(filler, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	asRun := filepath.Join(disk, "as-run.jsonl")
	showPath := writeShow(t, nullOutShow)
	p := compile(t, showPath, nil)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := show.Start(context.Background(), Backend(), p, nil, show.Options{BaseDir: filepath.Dir(showPath), AsRun: asRun, Log: log}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	status := func() show.AsRunStatus { return *s.Status().(show.StatusReport).AsRun }
	switches := 0
	switchOnce := func() {
		t.Helper()
		switches++
		if err := s.SwitchAt("pgm", []string{"one", "two"}[switches%2], "cut", 0, "", show.OriginAPI); err != nil {
			t.Fatal(err)
		}
		waitShow(t, s, "the switch drawn", func(sum show.Summary) bool {
			b := busOf(sum, "bus.pgm")
			return b.Switches == uint64(switches) && len(b.Cuts) > 0 && b.Cuts[len(b.Cuts)-1].Tick >= 0
		})
		waitShow(t, s, "its two lines written or lost", func(show.Summary) bool {
			st := status()
			return st.Lines+st.Lost >= uint64(2*switches)
		})
	}
	// A page holds about 15 lines: switch until four are lost.
	for status().Lost < 4 {
		if switches > 200 {
			t.Fatalf("200 switches and the disk took every line: %+v", status())
		}
		switchOnce()
	}
	st := status()
	if st.Lines == 0 || !strings.Contains(st.LastError, "no space left on device") {
		t.Errorf("as-run status on the full disk: %+v, want lines written, then lost with ENOSPC", st)
	}
	ticks := busOf(s.State.Summary(), "bus.pgm").Ticks
	waitShow(t, s, "the show on air with the disk full", ticksAtLeast("bus.pgm", ticks+10))
	b, err := os.ReadFile(asRun)
	if err != nil {
		t.Fatal(err)
	}
	if n := uint64(bytes.Count(b, []byte("\n"))); len(b) == 0 || b[len(b)-1] != '\n' || n != st.Lines {
		t.Fatalf("the full disk's file holds %d bytes, %d lines, ending %q: want the %d lines written, whole", len(b), n, b[max(0, len(b)-40):], st.Lines)
	}
	readAsRun(t, asRun) // every line parses

	// Room again.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	lost := status().Lost
	switchOnce()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if st := status(); st.Lost != lost {
		t.Errorf("%d more lines lost with room on the disk", st.Lost-lost)
	}
	lines := readAsRun(t, asRun)
	if n := len(lines); n < 2 || lines[n-1].Event != "switch_drawn" || lines[n-2].Event != "switch_asked" || lines[n-1].Tick == nil {
		t.Errorf("after the disk had room again the log ends %+v, want the last switch asked for and drawn", lines[max(0, n-2):])
	}
}
