package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/internal/testwait"
)

// TestMediaInterruptLeavesNothing: Ctrl-C (SIGINT) during onair media,
// raw or encoded through ffmpeg, stops it with a message and exit 1, and
// leaves nothing: no file under the final name, no temporary file, and no
// ffmpeg still writing.
func TestMediaInterruptLeavesNothing(t *testing.T) {
	peer.NeedFFmpeg(t)
	bin := onairBinary(t)
	for _, name := range []string{"clip.hevc", "clip.nv12"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, name)
			// Far more work than the test waits for (9 GB raw, minutes of
			// x265): it is interrupted once the first bytes are out.
			cmd := exec.Command(bin, "media", "-size", "1920x1080", "-frames", "3000", "-o", out)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Under way: bytes in the temporary file, or ffmpeg running on it
			// (x265 holds its first pictures back a while).
			testwait.Until(t, testwait.Bound, "the work under way", func() bool {
				m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
				st, err := os.Stat(firstOf(m))
				return err == nil && (st.Size() > 0 || strings.Contains(strings.Join(processesOn(dir), "\n"), "ffmpeg "))
			})
			cmd.Process.Signal(syscall.SIGINT)
			err := cmd.Wait()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "interrupted: "+out+" was not written") {
				t.Errorf("after SIGINT: %v, stderr %q; want exit 1 saying it was interrupted", err, stderr.String())
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
			// No process (an ffmpeg) still has the directory in its arguments.
			for _, p := range processesOn(dir) {
				t.Errorf("still running: %s", p)
			}
		})
	}
}

// processesOn are the command lines of the processes with dir in their
// arguments.
func processesOn(dir string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(dir)) {
			out = append(out, p+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return out
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
