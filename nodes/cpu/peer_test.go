package cpu

import (
	"bytes"
	"fmt"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/mediatest"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onairhq/onair/frame"
)

// needFFmpeg skips a test when ffmpeg or ffprobe is missing (CI installs them).
// peerInput is one generated input clip: a pattern at a size.
type peerInput struct {
	pattern media.Pattern
	w, h    int
}

// writeInput renders n frames of in as a Y4M file and returns the frames.
func writeInput(t *testing.T, path string, in peerInput, id uint16, f frame.Format, n int) []*frame.Frame {
	t.Helper()
	out, err := mediatest.RecordPattern(path, f, in.pattern, in.w, in.h, id, n)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// psnr returns the PSNR in dB of each plane (Y, Cb, Cr) of got against ref;
// +Inf for identical planes. Values are compared at the format's depth.
func psnr(got, ref *frame.Frame) [3]float64 {
	var se [3]float64
	var cnt [3]float64
	peak := 255.0
	at := func(f *frame.Frame, p, i int) float64 {
		if f.Format == frame.P010 {
			return float64(f.Plane16(p)[i] >> 6)
		}
		return float64(f.Data[p][i])
	}
	if got.Format == frame.P010 {
		peak = 1023
	}
	w, h := got.Width, got.Height
	bp := got.Format.BytesPerSample()
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*got.Pitch[0]/bp + x
			d := at(got, 0, i) - at(ref, 0, i)
			se[0] += d * d
			cnt[0]++
		}
	}
	for y := 0; y < h/2; y++ {
		for x := 0; x < w; x++ {
			i := y*got.Pitch[1]/bp + x
			d := at(got, 1, i) - at(ref, 1, i)
			se[1+x%2] += d * d
			cnt[1+x%2]++
		}
	}
	var out [3]float64
	for p := range out {
		mse := se[p] / cnt[p]
		if mse == 0 {
			out[p] = math.Inf(1)
		} else {
			out[p] = 10 * math.Log10(peak*peak/mse)
		}
	}
	return out
}

// runFFmpeg runs ffmpeg on the inputs with filter graph fg and returns its
// n output frames as rawvideo of format f.
func runFFmpeg(t *testing.T, dir string, inputs []string, fg string, f frame.Format, w, h, n int) []*frame.Frame {
	t.Helper()
	args := []string{"-hide_banner", "-loglevel", "error", "-y"}
	for _, in := range inputs {
		args = append(args, "-i", in)
	}
	pix := "nv12"
	if f == frame.P010 {
		pix = "p010le"
	}
	out := filepath.Join(dir, "peer.raw")
	args = append(args, "-filter_complex", fg, "-frames:v", strconv.Itoa(n), "-f", "rawvideo", "-pix_fmt", pix, out)
	cmd := exec.Command("ffmpeg", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ffmpeg %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	size := f.Size(w, h)
	if len(data) != size*n {
		t.Fatalf("ffmpeg wrote %d bytes, want %d frames of %d", len(data), n, size)
	}
	var frames []*frame.Frame
	for i := 0; i < n; i++ {
		fr, _ := frame.New(f, w, h)
		copy(fr.Bytes(), data[i*size:])
		frames = append(frames, fr)
	}
	return frames
}

// TestPeerFFmpeg renders scenes with the compositor and with ffmpeg's scale,
// pad, crop, stack and blend filters from the same generated inputs, and
// requires PSNR >= 40 dB on every plane of every frame.
func TestPeerFFmpeg(t *testing.T) {
	peer.NeedFFmpeg(t)
	const W, H, N = 640, 360, 3
	bil := "flags=bilinear"
	type scene struct {
		name   string
		format frame.Format
		inputs []peerInput
		layers func(in [][]*frame.Frame, i int) []Layer
		graph  string
	}
	full := frame.Rect{X: 0, Y: 0, W: W, H: H}
	scenes := []scene{
		{
			name: "full frame downscale", format: frame.NV12,
			inputs: []peerInput{{media.Bars, 1280, 720}},
			layers: func(in [][]*frame.Frame, i int) []Layer {
				return []Layer{{Frame: in[0][i], Rect: full, Opacity: 1}}
			},
			graph: "[0:v]scale=640:360:" + bil,
		},
		{
			name: "full frame upscale p010", format: frame.P010,
			inputs: []peerInput{{media.Ramp, 320, 180}},
			layers: func(in [][]*frame.Frame, i int) []Layer {
				return []Layer{{Frame: in[0][i], Rect: full, Opacity: 1}}
			},
			graph: "[0:v]scale=640:360:" + bil,
		},
		{
			name: "2x2 grid", format: frame.NV12,
			inputs: []peerInput{{media.Bars, 640, 360}, {media.Ramp, 640, 360}, {media.Checker, 640, 360}, {media.Bars, 1280, 720}},
			layers: func(in [][]*frame.Frame, i int) []Layer {
				var ls []Layer
				for k := 0; k < 4; k++ {
					ls = append(ls, Layer{Frame: in[k][i], Rect: frame.Rect{X: (k % 2) * 320, Y: (k / 2) * 180, W: 320, H: 180}, Opacity: 1})
				}
				return ls
			},
			graph: "[0:v]scale=320:180:" + bil + "[a];[1:v]scale=320:180:" + bil + "[b];[2:v]scale=320:180:" + bil + "[c];[3:v]scale=320:180:" + bil + "[d];" +
				"[a][b]hstack[top];[c][d]hstack[bot];[top][bot]vstack",
		},
		{
			name: "2x2 grid p010", format: frame.P010,
			inputs: []peerInput{{media.Bars, 640, 360}, {media.Ramp, 640, 360}, {media.Checker, 640, 360}, {media.Bars, 1280, 720}},
			layers: func(in [][]*frame.Frame, i int) []Layer {
				var ls []Layer
				for k := 0; k < 4; k++ {
					ls = append(ls, Layer{Frame: in[k][i], Rect: frame.Rect{X: (k % 2) * 320, Y: (k / 2) * 180, W: 320, H: 180}, Opacity: 1})
				}
				return ls
			},
			graph: "[0:v]scale=320:180:" + bil + "[a];[1:v]scale=320:180:" + bil + "[b];[2:v]scale=320:180:" + bil + "[c];[3:v]scale=320:180:" + bil + "[d];" +
				"[a][b]hstack[top];[c][d]hstack[bot];[top][bot]vstack",
		},
		{
			name: "contain with padding", format: frame.NV12,
			inputs: []peerInput{{media.Ramp, 640, 480}},
			layers: func(in [][]*frame.Frame, i int) []Layer {
				return []Layer{{Frame: in[0][i], Rect: full, Fit: frame.Contain, Opacity: 1}}
			},
			graph: "[0:v]scale=480:360:" + bil + ",pad=640:360:80:0:black",
		},
		{
			name: "contain with padding p010", format: frame.P010,
			inputs: []peerInput{{media.Bars, 480, 480}},
			layers: func(in [][]*frame.Frame, i int) []Layer {
				return []Layer{{Frame: in[0][i], Rect: full, Fit: frame.Contain, Opacity: 1}}
			},
			graph: "[0:v]scale=360:360:" + bil + ",pad=640:360:140:0:black",
		},
		{
			name: "cover", format: frame.NV12,
			inputs: []peerInput{{media.Bars, 480, 480}},
			layers: func(in [][]*frame.Frame, i int) []Layer {
				return []Layer{{Frame: in[0][i], Rect: full, Fit: frame.Cover, Opacity: 1}}
			},
			graph: "[0:v]crop=480:270:0:104,scale=640:360:" + bil,
		},
		{
			name: "opacity blend", format: frame.NV12,
			inputs: []peerInput{{media.Bars, 640, 360}, {media.Ramp, 640, 360}},
			layers: func(in [][]*frame.Frame, i int) []Layer {
				return []Layer{{Frame: in[0][i], Rect: full, Opacity: 1}, {Frame: in[1][i], Rect: full, Opacity: 0.5, Z: 1}}
			},
			graph: "[1:v][0:v]blend=all_mode=normal:all_opacity=0.5",
		},
	}
	for _, sc := range scenes {
		t.Run(sc.name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			var ins [][]*frame.Frame
			for k, in := range sc.inputs {
				p := filepath.Join(dir, fmt.Sprintf("in%d.y4m", k))
				ins = append(ins, writeInput(t, p, in, uint16(k+1), sc.format, N))
				paths = append(paths, p)
			}
			ref := runFFmpeg(t, dir, paths, sc.graph, sc.format, W, H, N)
			c := NewCompositor()
			got, _ := frame.New(sc.format, W, H)
			for i := 0; i < N; i++ {
				if err := c.Render(got, sc.layers(ins, i)); err != nil {
					t.Fatal(err)
				}
				q := psnr(got, ref[i])
				t.Logf("frame %d: PSNR Y %.1f Cb %.1f Cr %.1f dB", i, q[0], q[1], q[2])
				for p, v := range q {
					if v < 40 {
						t.Errorf("frame %d plane %d: PSNR %.2f dB < 40 against ffmpeg %q", i, p, v, sc.graph)
					}
				}
				// The check can fail: the neighbouring frame (the pattern
				// moved) must not pass for this one.
				if o := psnr(got, ref[(i+1)%N]); o[0] >= 40 {
					t.Errorf("frame %d: PSNR %.1f dB against ffmpeg's frame %d: the comparison does not see motion", i, o[0], (i+1)%N)
				}
			}
		})
	}
}
