package media

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/golden"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/nodes/media/es"
)

const clipDir = "es/testdata"

// The committed clips (es/testdata/README.md): 640x360, 30 frames.
var decodeClips = []struct {
	name   string
	codec  es.Codec
	format frame.Format
}{
	{"hevc8.hevc", es.HEVC, frame.NV12},
	{"hevc10.hevc", es.HEVC, frame.P010},
	{"h264.264", es.H264, frame.NV12},
	{"hevc8.ts", es.HEVC, frame.NV12},
	{"hevc10.ts", es.HEVC, frame.P010},
	{"h264.ts", es.H264, frame.NV12},
}

// framemd5 is the peer: ffmpeg's own MD5 of every frame it decodes from
// path, as pix (nv12 or p010le).
func framemd5(t *testing.T, path, pix string) []string { return peer.FrameMD5(t, path, pix) }

func pixName(f frame.Format) string {
	if f == frame.P010 {
		return "p010le"
	}
	return "nv12"
}

func sum(f *frame.Frame) string {
	s := md5.Sum(f.Bytes())
	return hex.EncodeToString(s[:])
}

// TestDecodeMatchesFFmpeg: every frame of every clip, decoded through
// onair's access units and a looping Decoder, is byte for byte what
// ffmpeg's own framemd5 of the file says, over two passes; those MD5s are
// kept in es/testdata/reference.md5, which NVDEC is checked against on the
// GPU machine (-update rewrites it from ffmpeg).
func TestDecodeMatchesFFmpeg(t *testing.T) {
	peer.NeedFFmpeg(t)
	var ref bytes.Buffer
	ref.WriteString("# The MD5 of every decoded frame of the clips here: ffmpeg -i CLIP -f framemd5 -pix_fmt nv12|p010le\n# (nv12 for 8-bit, p010le for 10-bit). Written by go test ./nodes/media -run DecodeMatchesFFmpeg -update.\n")
	for _, c := range decodeClips {
		path := filepath.Join(clipDir, c.name)
		want := framemd5(t, path, pixName(c.format))
		if len(want) != 30 {
			t.Fatalf("%s: ffmpeg decodes %d frames, the clip has 30", c.name, len(want))
		}
		for i, s := range want {
			fmt.Fprintf(&ref, "%s %d %s\n", c.name, i, s)
		}
		t.Run(c.name, func(t *testing.T) {
			d, err := OpenDecoder(DecodeConfig{Path: path, Codec: c.codec, Format: c.format, Width: 640, Height: 360, Loop: true})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			fr, _ := frame.New(c.format, 640, 360)
			for i := 0; i < 2*len(want); i++ {
				if err := d.Next(fr); err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if got := sum(fr); got != want[i%len(want)] {
					t.Fatalf("frame %d (pass %d, picture %d): MD5 %s, ffmpeg's %s", i, i/len(want)+1, i%len(want), got, want[i%len(want)])
				}
			}
			if w := d.Warnings(); len(w) > 0 {
				t.Errorf("warnings on a clean clip: %q", w)
			}
		})
	}
	golden.Check(t, filepath.Join(clipDir, "reference.md5"), ref.Bytes())
}

func TestDecodeEndsWithoutLoop(t *testing.T) {
	peer.NeedFFmpeg(t)
	d, err := OpenDecoder(DecodeConfig{Path: filepath.Join(clipDir, "h264.ts"), Codec: es.H264, Format: frame.NV12, Width: 640, Height: 360})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	fr, _ := frame.New(frame.NV12, 640, 360)
	n := 0
	for ; ; n++ {
		err := d.Next(fr)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if id, num, ok := ReadStamp(fr, frame.Rect{W: 640, H: 360}); !ok || id != 5 || num != uint32(n) {
			t.Fatalf("frame %d carries stamp %d/%d (%v)", n, id, num, ok)
		}
	}
	if n != 30 || d.Passes() != 1 {
		t.Errorf("%d frames in %d passes, want 30 in 1", n, d.Passes())
	}
	if err := d.Next(fr); err != io.EOF {
		t.Errorf("after the end: %v, want io.EOF again", err)
	}
}

func TestDecodeRefusesWhatDoesNotFit(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, tc := range []struct {
		clip  string
		codec es.Codec
		f     frame.Format
		w, h  int
		msg   string
	}{
		{"hevc8.hevc", es.HEVC, frame.NV12, 1280, 720, `640x360 8-bit 4:2:0 HEVC video, but the source declares 1280x720 nv12: set the source's size = "640x360" and format = "nv12"`},
		{"hevc10.ts", es.HEVC, frame.NV12, 640, 360, `640x360 10-bit 4:2:0 HEVC video, but the source declares 640x360 nv12: set the source's size = "640x360" and format = "p010"`},
		{"hevc8.hevc", es.HEVC, frame.P010, 640, 360, `format = "nv12"`},
		{"h264.ts", es.HEVC, frame.NV12, 640, 360, "carries [H.264] video, no HEVC"},
		{"missing.hevc", es.HEVC, frame.NV12, 640, 360, "no such file"},
	} {
		d, err := OpenDecoder(DecodeConfig{Path: filepath.Join(clipDir, tc.clip), Codec: tc.codec, Format: tc.f, Width: tc.w, Height: tc.h})
		if err == nil {
			d.Close()
			t.Errorf("%s as %v %dx%d: opened", tc.clip, tc.f, tc.w, tc.h)
			continue
		}
		if !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), tc.clip) {
			t.Errorf("%s: %q, want the file named and %q", tc.clip, err, tc.msg)
		}
	}
	if err := CheckStream("x.264", es.Info{Codec: es.H264, Width: 64, Height: 64, BitDepth: 10, BitDepthChroma: 10, ChromaFormat: 1}, frame.P010, 64, 64); err == nil || !strings.Contains(err.Error(), "NVDEC decodes 8-bit H.264 only") {
		t.Errorf("10-bit H.264: %v", err)
	}
	if err := CheckStream("x.hevc", es.Info{Codec: es.HEVC, Width: 64, Height: 64, BitDepth: 8, BitDepthChroma: 8, ChromaFormat: 2}, frame.NV12, 64, 64); err == nil || !strings.Contains(err.Error(), "4:2:0 only") {
		t.Errorf("4:2:2: %v", err)
	}
}

// A stream whose size changes in the middle plays up to the change, which
// is reported once per pass; looping, it starts again from its start.
func TestDecodeRefusesAChangeOfSize(t *testing.T) {
	peer.NeedFFmpeg(t)
	dir := t.TempDir()
	small := filepath.Join(dir, "small.hevc")
	tp, _ := NewTestPattern(TestPatternConfig{ID: "small", StampID: 9, Format: frame.NV12, Width: 320, Height: 180, Rate: frame.Rational{Num: 30, Den: 1}})
	if err := Encode(EncodeConfig{Path: small, Codec: "hevc", Container: "es", Format: frame.NV12, Width: 320, Height: 180, Rate: frame.Rational{Num: 30, Den: 1}, GOP: 5}, tp, 5); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(clipDir, "hevc8.hevc"))
	b, _ := os.ReadFile(small)
	joined := filepath.Join(dir, "joined.hevc")
	os.WriteFile(joined, append(a, b...), 0o644)
	for _, loop := range []bool{false, true} {
		d, err := OpenDecoder(DecodeConfig{Path: joined, Codec: es.HEVC, Format: frame.NV12, Width: 640, Height: 360, Loop: loop})
		if err != nil {
			t.Fatal(err)
		}
		fr, _ := frame.New(frame.NV12, 640, 360)
		n := 0
		for ; n < 75; n++ {
			err := d.Next(fr)
			if err == io.EOF && !loop {
				break
			}
			if err != nil {
				t.Fatalf("loop %v, frame %d: %v", loop, n, err)
			}
			if id, num, ok := ReadStamp(fr, frame.Rect{W: 640, H: 360}); !ok || id != 1 || num != uint32(n%30) {
				t.Fatalf("loop %v, frame %d carries stamp %d/%d (%v), want 1/%d", loop, n, id, num, ok, n%30)
			}
		}
		w := d.Warnings()
		d.Close()
		if !loop && n != 30 {
			t.Errorf("without loop: %d frames, want the 30 before the change", n)
		}
		if len(w) == 0 || !strings.Contains(w[0], "changes from 640x360 8-bit 4:2:0 HEVC to 320x180 8-bit 4:2:0 HEVC at access unit 30") || !strings.Contains(w[0], "joined.hevc") {
			t.Errorf("loop %v: warnings %q", loop, w)
		}
	}
}

// A sequence parameter set inside a stream that declares a picture over
// the size limit ends the stream there with that reason, as a change of
// size does; it is not passed over for ffmpeg to meet.
func TestDecodeReportsAnSPSOverTheLimit(t *testing.T) {
	peer.NeedFFmpeg(t)
	// An HEVC SPS of 20000x1080, otherwise the Main profile's (written by
	// nodes/media/es's hevcSPS), then a PPS and an IDR slice.
	sps := []byte{0x42, 0x1, 0x1, 0x1, 0x60, 0x0, 0x0, 0x3, 0x0, 0x90, 0x0, 0x0, 0x3, 0x0, 0x0, 0x3, 0x0, 0x78, 0xa0, 0x0, 0x27, 0x10, 0x80, 0x10, 0xe5, 0x96}
	var wide []byte
	for _, nal := range [][]byte{sps, {0x44, 0x01, 0xc1, 0x72, 0xb4, 0x62, 0x40}, {0x26, 0x01, 0xaf, 0x13, 0x80}} {
		wide = append(append(wide, 0, 0, 0, 1), nal...)
	}
	a, _ := os.ReadFile(filepath.Join(clipDir, "hevc8.hevc"))
	path := filepath.Join(t.TempDir(), "wide.hevc")
	os.WriteFile(path, append(a, wide...), 0o644)
	d, err := OpenDecoder(DecodeConfig{Path: path, Codec: es.HEVC, Format: frame.NV12, Width: 640, Height: 360})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	fr, _ := frame.New(frame.NV12, 640, 360)
	n := 0
	for ; ; n++ {
		if err := d.Next(fr); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("frame %d: %v", n, err)
		}
	}
	w := d.Warnings()
	if n != 30 || len(w) == 0 || !strings.Contains(w[0], "wide.hevc at access unit 30") || !strings.Contains(w[0], "declares 20000x1080, over the 16384 limit") {
		t.Errorf("%d frames, warnings %q; want the 30 before the SPS and its size named", n, w)
	}
}

// A corrupt picture is concealed by ffmpeg and reported; the frames go on,
// pass after pass.
func TestDecodeReportsCorruptPictures(t *testing.T) {
	peer.NeedFFmpeg(t)
	data, _ := os.ReadFile(filepath.Join(clipDir, "hevc8.hevc"))
	i := bytes.Index(data, []byte{0, 0, 1, 0x28}) // the first IDR slice
	for k := i + 5; k < i+40; k++ {
		data[k] = 0xff // its slice header and first coded blocks
	}
	path := filepath.Join(t.TempDir(), "corrupt.hevc")
	os.WriteFile(path, data, 0o644)
	d, err := OpenDecoder(DecodeConfig{Path: path, Codec: es.HEVC, Format: frame.NV12, Width: 640, Height: 360, Loop: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	fr, _ := frame.New(frame.NV12, 640, 360)
	var warnings []string
	for n := 0; n < 90; n++ {
		if err := d.Next(fr); err != nil {
			t.Fatalf("frame %d: %v", n, err)
		}
		warnings = append(warnings, d.Warnings()...)
	}
	if len(warnings) == 0 || !strings.Contains(warnings[0], "ffmpeg decoding "+path+": ") {
		t.Errorf("the corrupt picture was not reported: %q", warnings)
	}
}

// Kill ends a Next that waits on ffmpeg, from another goroutine.
func TestDecodeKillUnblocks(t *testing.T) {
	peer.NeedFFmpeg(t)
	d, err := OpenDecoder(DecodeConfig{Path: filepath.Join(clipDir, "hevc8.hevc"), Codec: es.HEVC, Format: frame.NV12, Width: 640, Height: 360, Loop: true})
	if err != nil {
		t.Fatal(err)
	}
	fr, _ := frame.New(frame.NV12, 640, 360)
	d.Next(fr)
	d.Kill()
	for {
		if err := d.Next(fr); err != nil {
			if !strings.Contains(err.Error(), "stopped") {
				t.Errorf("after Kill: %v", err)
			}
			break
		}
	}
	d.Close()
}
