package es

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/internal/peer"
)

// TestOpenPointsAnMP4AtStream: an MP4 given to a file source is refused
// with what to use instead, not "holds no sequence parameter set".
func TestOpenPointsAnMP4AtStream(t *testing.T) {
	peer.NeedFFmpeg(t)
	mp4 := filepath.Join(t.TempDir(), "clip.mp4")
	if out, err := exec.Command("ffmpeg", "-v", "error", "-i", filepath.Join("testdata", "h264.ts"), "-c", "copy", mp4).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	_, err := Open(mp4, H264)
	if err == nil || !errors.Is(err, ErrNoStream) || !strings.Contains(err.Error(), `source "stream"`) {
		t.Fatalf("Open(an MP4) = %v", err)
	}
}
