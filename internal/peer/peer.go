// Package peer finds the programs tests check onair's output against
// (ffmpeg and ffprobe), so a test names what it needs in one call.
//
// It is for tests; it must never import anything of onair's.
package peer

import (
	"os/exec"
	"strings"
	"testing"
)

// NeedFFmpeg skips t when ffmpeg or ffprobe is not on $PATH (`make test`
// and CI install both).
func NeedFFmpeg(t testing.TB) {
	t.Helper()
	for _, b := range []string{"ffmpeg", "ffprobe"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skip("ffmpeg not installed: " + b + " is not on $PATH")
		}
	}
}

// FrameMD5 is ffmpeg's own MD5 of every frame it decodes from path (a file
// or URL) as pix (nv12, p010le...), in order: what onair's decoded frames
// are checked against.
func FrameMD5(t testing.TB, path, pix string) []string {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-v", "error", "-i", path, "-f", "framemd5", "-pix_fmt", pix, "-").Output()
	if err != nil {
		t.Fatalf("ffmpeg framemd5 %s: %v", path, err)
	}
	var sums []string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Split(l, ","); len(f) == 6 && !strings.HasPrefix(l, "#") {
			sums = append(sums, strings.TrimSpace(f[5]))
		}
	}
	return sums
}
