package show

import (
	"encoding/binary"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/nodes/media"
)

// A record output's WAV beside its Y4M takes each frame's block, and a
// restarted node continues it: after five frames, a restart and five more,
// ffprobe reads ten frames' samples, and every sample is the one written.
func TestRecordWAVAcrossARestart(t *testing.T) {
	peer.NeedFFmpeg(t)
	const w, h, n = 64, 48, 1600
	path := filepath.Join(t.TempDir(), "pgm.y4m")
	st := &OutputState{Address: "output.pgm", Kind: "record"}
	r := &recorder{path: path, format: frame.NV12, width: w, height: h, rate: frame.Rational{Num: 30, Den: 1},
		st: st, open: media.OpenOSFile, now: time.Now, wavPath: WAVPath(path)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	k := 0
	for pass := 0; pass < 2; pass++ {
		if err := r.start(log); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			f, _ := frame.New(frame.NV12, w, h)
			f.Audio = make([]float32, 2*n)
			for i := range f.Audio {
				f.Audio[i] = float32(k*2*n+i) / (20 * n)
			}
			if err := r.write(f); err != nil {
				t.Fatal(err)
			}
			k++
		}
		if err := r.close(); err != nil { // the node stops; the recorder stays
			t.Fatal(err)
		}
	}
	wav := filepath.Join(filepath.Dir(path), "pgm.wav")
	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=sample_rate,channels,codec_name,duration_ts", "-of", "csv=p=0", wav).Output()
	if err != nil || strings.TrimSpace(string(out)) != "pcm_f32le,48000,2,16000" {
		t.Errorf("ffprobe reads %q (%v), want pcm_f32le,48000,2,16000", out, err)
	}
	b, _ := os.ReadFile(wav)
	if len(b) != 44+10*n*8 || binary.LittleEndian.Uint32(b[40:]) != 10*n*8 {
		t.Fatalf("the WAV holds %d bytes, its header says %d of samples", len(b), binary.LittleEndian.Uint32(b[40:]))
	}
	for i := 0; i < 10*2*n; i++ {
		if v := math.Float32frombits(binary.LittleEndian.Uint32(b[44+4*i:])); v != float32(i)/(20*n) {
			t.Fatalf("sample %d is %v, want %v", i, v, float32(i)/(20*n))
		}
	}
}
