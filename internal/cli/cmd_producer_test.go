package cli

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/media/ipc"
)

func TestProducerFlagsSayWhatIsWrong(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "-socket PATH is required"},
		{[]string{"-socket", "x.sock", "-size", "33x20"}, "-size"},
		{[]string{"-socket", "x.sock", "-frames", "-1"}, "must be 0 or more"},
		{[]string{"-socket", "x.sock", "extra"}, "unexpected argument"},
		{[]string{"-socket", "x.sock", "-gpu"}, "go with -pattern"},
		{[]string{"-socket", "x.sock", "-pattern", "-count", "4"}, "needs a -socket with %d"},
		{[]string{"-socket", "x.sock", "-pattern", "-pool", "lifo"}, "chromium or steady"},
		{[]string{"-socket", "x.sock", "-pattern", "-fps", "0"}, "-fps 0"},
	}
	for _, c := range cases {
		rc, _, errs := runCLI(t, append([]string{"producer"}, c.args...)...)
		if rc != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("producer %v: rc %d, stderr %q; want 2 and %q", c.args, rc, errs, c.want)
		}
	}
}

// TestProducerNumbersOneSocket: a -socket with %d names socket 0 with
// -count 1 too (the seeds' script passes gfx-%d.sock whatever the count):
// three frames reach a real receiver listening on gfx-0.sock.
func TestProducerNumbersOneSocket(t *testing.T) {
	dir := t.TempDir()
	r, err := ipc.Listen(ipc.ReceiverConfig{Path: filepath.Join(dir, "gfx-0.sock"), FramesInFlight: 9})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got atomic.Int64
	go r.Serve(func(f *ipc.Frame) { got.Add(1); f.Release() })
	rc, out, errs := runCLI(t, "producer", "-pattern", "-frames", "3", "-size", "64x36", "-socket", filepath.Join(dir, "gfx-%d.sock"))
	if rc != 0 || !strings.Contains(out, "3 frames sent") {
		t.Fatalf("producer: rc %d, stdout %q, stderr %q; want 3 frames sent to gfx-0.sock", rc, out, errs)
	}
	testwait.Until(t, testwait.Bound, "three frames delivered", func() bool { return got.Load() == 3 })
}
