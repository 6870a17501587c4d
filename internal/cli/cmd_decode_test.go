package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/internal/testwait"
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
	// Run until the recording holds twenty of the clip's pictures, then
	// stop as Ctrl-C does: a -duration would count the start-up (ffmpeg
	// probing its input) too, which a busy machine may stretch past it.
	rec := filepath.Join(dir, "pgm.y4m")
	bg := runInBackground("run", "-backend", "cpu", "-listen", "", show)
	bg.waitOut(t, "on air: hevc")
	testwait.Until(t, testwait.Bound, "twenty of the clip's pictures in the recording", func() bool { return stampedPictures(t, rec, 4) >= 20 })
	rc := bg.interrupt(t)
	out, errs := bg.out.String(), bg.errs.String()
	if rc != 0 {
		t.Fatalf("run: rc %d\n%s%s", rc, out, errs)
	}
	if !strings.Contains(out, "source.cam") {
		t.Errorf("the summary lacks the source:\n%s", out)
	}
	if stamped := stampedPictures(t, rec, 4); stamped < 20 {
		t.Errorf("%d recorded pictures carry the clip's stamp, want twenty or more", stamped)
	}
}

// stampedPictures counts the whole pictures of a 640x360 recording, however
// far it has been written, that carry stamp id.
func stampedPictures(t *testing.T, path string, id uint16) int {
	t.Helper()
	return y4mPictures(path, func(fr *frame.Frame) bool {
		got, _, ok := media.ReadStamp(fr, frame.Rect{W: 640, H: 360})
		return ok && got == id
	})
}

// examples/decode-mix.hcl, HEVC and H.264 from Annex B and MPEG-TS files
// in one show, runs on the CPU backend as a user runs it: ffmpeg decodes
// the four files, every source delivers pictures, both buses draw and both
// recordings fill. (Deadlines are the H200's to hold: nodes/cuda's
// TestNVDECExampleDecodeMix runs the same file on NVDEC and asserts 0
// missed; here two busy cores start four ffmpeg processes at once.)
func TestDecodeMixExampleRunsOnTheCPU(t *testing.T) {
	peer.NeedFFmpeg(t)
	dir := t.TempDir()
	pgm, ts := filepath.Join(dir, "decode-mix-pgm.y4m"), filepath.Join(dir, "decode-mix-ts.y4m")
	bg := runInBackground("run", "-backend", "cpu", "-listen", "", "-var", "out="+dir, "examples/decode-mix.hcl")
	bg.waitOut(t, "on air: decode-mix")
	testwait.Until(t, testwait.Bound, "45 pictures in both recordings", func() bool {
		return y4mPictures(pgm, nil) >= 45 && y4mPictures(ts, nil) >= 45
	})
	rc := bg.interrupt(t)
	out, errs := bg.out.String(), bg.errs.String()
	if rc != 0 {
		t.Fatalf("run: rc %d\n%s%s", rc, out, errs)
	}
	for _, src := range []string{`source.hevc["hevc_annexb"]`, `source.hevc["hevc_ts"]`, `source.h264["h264_annexb"]`, `source.h264["h264_ts"]`} {
		frames := -1
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) >= 3 && f[0] == src && f[2] == "frames," {
				frames, _ = strconv.Atoi(f[1])
			}
		}
		if frames < 30 { // the clip once through at least
			t.Errorf("%s delivered %d pictures, want 30 or more:\n%s", src, frames, out)
		}
	}
}

// y4mPictures counts the whole 640x360 pictures a recording holds so far
// that keep accepts (every one with keep nil).
func y4mPictures(path string, keep func(*frame.Frame) bool) int {
	rec, err := media.OpenY4M(path, "rec", false)
	if err != nil {
		return 0 // not written yet
	}
	defer rec.Close()
	fr, _ := frame.New(frame.NV12, 640, 360)
	n := 0
	for rec.Next(fr) == nil {
		if keep == nil || keep(fr) {
			n++
		}
	}
	return n
}
