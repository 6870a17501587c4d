package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/nodes/media"
)

// An HEVC show plans and runs on the CPU backend alike: the lowering that
// plan prints (ffmpeg_decode) is what run starts, and the recording shows
// the clip's stamped pictures.
func TestHEVCShowPlansAndRunsOnTheCPU(t *testing.T) {
	peer.NeedFFmpeg(t)
	dir := t.TempDir()
	clip, _ := filepath.Abs("nodes/media/es/testdata/hevc8.ts") // the tests run in the repository root
	show := filepath.Join(dir, "show.hcl")
	os.WriteFile(show, []byte(`
show {
  name       = "hevc"
  size       = "640x360"
  frame_rate = "30"
}
source "hevc_file" "cam" {
  path = "`+clip+`"
  loop = true
}
scene "cam" {
  layer {
    source = source.cam
  }
}
bus "program" "pgm" {
  scene = scene.cam
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
`), 0o644)
	for _, be := range []string{"cpu", "cuda"} {
		rc, out, errs := runCLI(t, "plan", "-backend", be, show)
		if rc != 0 {
			t.Fatalf("plan -backend %s: rc %d\n%s%s", be, rc, out, errs)
		}
		want := map[string]string{"cpu": "ffmpeg_decode", "cuda": "dec_video"}[be]
		if !strings.Contains(out, want) {
			t.Errorf("plan -backend %s has no %s:\n%s", be, want, out)
		}
	}
	rc, out, errs := runCLI(t, "run", "-backend", "cpu", "-duration", "4s", "-listen", "", show) // the start (ffmpeg probing its input) counts in the duration
	if rc != 0 {
		t.Fatalf("run: rc %d\n%s%s", rc, out, errs)
	}
	if !strings.Contains(out, "source.cam") {
		t.Errorf("the summary lacks the source:\n%s", out)
	}
	rec, err := media.OpenY4M(filepath.Join(dir, "pgm.y4m"), "rec", false)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	fr, _ := frame.New(frame.NV12, 640, 360)
	stamped := 0
	for rec.Next(fr) == nil {
		if id, _, ok := media.ReadStamp(fr, frame.Rect{W: 640, H: 360}); ok && id == 4 {
			stamped++
		}
	}
	if stamped < 20 {
		t.Errorf("%d recorded pictures carry the clip's stamp, want most of the run", stamped)
	}
}
