package delivery

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// FFmpeg is what one ffmpeg binary offers, read once per binary and
// process (ProbeFFmpeg).
type FFmpeg struct {
	Path     string // the binary, as found on $PATH
	Encoders map[string]bool

	mu    sync.Mutex
	nvenc map[string]bool // an NVENC encoder's trial encode: did it open?
}

var (
	probeMu sync.Mutex
	probed  = map[string]*FFmpeg{}
)

// ProbeFFmpeg finds bin ("" is ffmpeg on $PATH) and reads its encoders
// (`ffmpeg -encoders`), once per binary for the life of the process.
func ProbeFFmpeg(bin string) (*FFmpeg, error) {
	if bin == "" {
		bin = "ffmpeg"
	}
	probeMu.Lock()
	defer probeMu.Unlock()
	if f, ok := probed[bin]; ok {
		return f, nil
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("%w (install ffmpeg: the delivery outputs encode with it)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-hide_banner", "-nostdin", "-encoders").Output()
	if err != nil {
		return nil, fmt.Errorf("%s -encoders: %v", path, err)
	}
	f := &FFmpeg{Path: path, Encoders: parseEncoders(out), nvenc: map[string]bool{}}
	probed[bin] = f
	return f, nil
}

// parseEncoders reads `ffmpeg -encoders`: after the legend's "------"
// line, one encoder a line, its capability flags then its name.
func parseEncoders(out []byte) map[string]bool {
	encs := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	body := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !body {
			body = strings.HasPrefix(line, "------")
			continue
		}
		if f := strings.Fields(line); len(f) >= 2 {
			encs[f[1]] = true
		}
	}
	return encs
}

// Check says whether this ffmpeg has the encoders v and a ask for
// ("auto" needs the codec's software encoder, which it falls back to).
func (f *FFmpeg) Check(v Video, a Audio) error {
	enc := PlannedEncoder(v)
	if !f.Encoders[enc] {
		if v.Encoder == "auto" || v.Encoder == "" {
			return fmt.Errorf("%s has no %s, the %s encoder encoder = \"auto\" falls back to where there is no NVENC; install an ffmpeg built with it or name an encoder it has", f.Path, enc, v.Codec)
		}
		return fmt.Errorf("%s has no encoder %q%s; `ffmpeg -encoders` lists those it has", f.Path, enc, f.alike(v.Codec))
	}
	if ae := AudioCodecs[a.Codec]; a.Codec != "" && !f.Encoders[ae] {
		return fmt.Errorf("%s has no %s encoder (%s) for the audio", f.Path, a.Codec, ae)
	}
	return nil
}

// alike names the encoders this ffmpeg has for codec, for an error.
func (f *FFmpeg) alike(codec string) string {
	var have []string
	for _, e := range []string{Codecs[codec].Software, Codecs[codec].NVENC} {
		if f.Encoders[e] {
			have = append(have, e)
		}
	}
	if len(have) == 0 {
		return ""
	}
	return fmt.Sprintf(" (for %s it has %s)", codec, strings.Join(have, ", "))
}

// Resolve is the encoder an output runs with: the named one, or for "auto"
// the codec's NVENC encoder when this ffmpeg has it and a one-frame trial
// encode opens it (a GPU with NVENC is there), else the software encoder.
func (f *FFmpeg) Resolve(v Video) string {
	if v.Encoder != "" && v.Encoder != "auto" {
		return v.Encoder
	}
	nv := Codecs[v.Codec].NVENC
	if f.Encoders[nv] && f.nvencOpens(nv) {
		return nv
	}
	return Codecs[v.Codec].Software
}

func (f *FFmpeg) nvencOpens(enc string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ok, done := f.nvenc[enc]; done {
		return ok
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := exec.CommandContext(ctx, f.Path, "-hide_banner", "-nostdin", "-loglevel", "error",
		"-f", "lavfi", "-i", "color=size=256x256:rate=30", "-frames:v", "1", "-c:v", enc, "-f", "null", "-").Run()
	f.nvenc[enc] = err == nil
	return err == nil
}
