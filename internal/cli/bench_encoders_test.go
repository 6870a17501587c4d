package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/internal/peer"
)

// onair bench reads each ffmpeg output over its window: the frames it took
// and dropped, its speed and its process's CPU (read from /proc by the
// process's PID, which /status carries), in the JSON and the table, so
// that the device script can tell an encoder that falls behind from one
// that keeps up.
func TestBenchReadsEachEncoder(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a show for three seconds")
	}
	peer.NeedFFmpeg(t)
	dir := t.TempDir()
	show := filepath.Join(dir, "enc.hcl")
	if err := os.WriteFile(show, []byte(`show {
  name       = "enc"
  size       = "320x180"
  frame_rate = "25"
}
source "test_pattern" "bars" {}
scene "one" {
  layer { source = source.bars }
}
bus "program" "pgm" { scene = scene.one }
output "file" "rec" {
  bus  = bus.pgm
  path = "rec.ts"
}
output "stream" "udp" {
  bus = bus.pgm
  url = "udp://127.0.0.1:9?pkt_size=1316"
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "enc.json")
	rc, stdout, stderr := runCLI(t, "bench", "-backend", "cpu", "-warmup", "1s", "-window", "2s", "-json", out, show)
	if rc != 0 {
		t.Fatalf("bench: rc %d\n%s\n%s", rc, stdout, stderr)
	}
	r := readBenchResult(t, out)
	if len(r.Encoders) != 2 {
		t.Fatalf("encoders %+v; want output.rec and output.udp", r.Encoders)
	}
	for _, e := range r.Encoders {
		if e.Frames < 25 || e.CPUPercent <= 0 || e.Restarts != 0 {
			t.Errorf("%s: %+v; want a second of frames or more, its process's CPU, no restart", e.Address, e)
		}
	}
	if !strings.Contains(stdout, "  encoders               2 ffmpeg outputs") || !strings.Contains(stdout, "output.udp") {
		t.Errorf("the table has no encoders:\n%s", stdout)
	}
}
