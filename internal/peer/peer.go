// Package peer finds the programs tests check onair's output against
// (ffmpeg and ffprobe), so a test names what it needs in one call.
//
// It is for tests; it must never import anything of onair's.
package peer

import (
	"os/exec"
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
