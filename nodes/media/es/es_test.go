package es

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/onairhq/onair/internal/peer"
)

// The clips `onair media` made (see testdata/README): 640x360, 30 frames
// at 30 fps, an IDR every 10 frames, B-frames.
var clips = []struct {
	name  string
	codec Codec
	depth int
	ts    bool
}{
	{"hevc8.hevc", HEVC, 8, false},
	{"hevc10.hevc", HEVC, 10, false},
	{"h264.264", H264, 8, false},
	{"hevc8.ts", HEVC, 8, true},
	{"hevc10.ts", HEVC, 10, true},
	{"h264.ts", H264, 8, true},
}

func readAll(t *testing.T, r *Reader) []AccessUnit {
	t.Helper()
	var out []AccessUnit
	for {
		au, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		checkNALs(t, au)
		au.Data = append([]byte(nil), au.Data...)
		au.NALs = append([]int32(nil), au.NALs...)
		out = append(out, au)
	}
}

// checkNALs: an access unit's NALs are where its start codes end, every
// one of them, in order.
func checkNALs(t testing.TB, au AccessUnit) {
	t.Helper()
	var want []int32
	for from := 0; ; {
		i := bytes.Index(au.Data[from:], startCode)
		if i < 0 {
			break
		}
		from += i + 3
		want = append(want, int32(from))
	}
	if !slices.Equal(au.NALs, want) {
		t.Fatalf("access unit %d: NALs at %v, its start codes end at %v", au.Index, au.NALs, want)
	}
}

func TestClipsSplitIntoPictures(t *testing.T) {
	for _, c := range clips {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join("testdata", c.name)
			r, err := Open(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			info, ok := r.Info()
			if !ok || r.Codec() != c.codec || info.Width != 640 || info.Height != 360 || info.BitDepth != c.depth || info.ChromaFormat != 1 {
				t.Fatalf("codec %v info %+v, want %v 640x360 %d-bit 4:2:0", r.Codec(), info, c.codec, c.depth)
			}
			if c.codec == H264 && (info.CodedHeight != 368 || info.Crop[3] != 8) {
				t.Errorf("H.264 640x360 is coded 640x368 cropped by 8 rows; got %+v", info)
			}
			aus := readAll(t, r)
			if len(aus) != 30 {
				t.Fatalf("%d access units, want 30 (one per frame)", len(aus))
			}
			for i, au := range aus {
				key := i%10 == 0
				if au.Key != key || !au.Pictures || au.Index != int64(i) || (au.Info != nil) != key {
					t.Errorf("access unit %d: key %v pictures %v index %d sps %v; want key and SPS every 10th", i, au.Key, au.Pictures, au.Index, au.Info != nil)
				}
				if au.HasPTS != c.ts {
					t.Errorf("access unit %d: HasPTS %v in a %s", i, au.HasPTS, c.name)
				}
				if i > 0 && au.Offset != aus[i-1].Offset+int64(len(aus[i-1].Data)) {
					t.Errorf("access unit %d starts at %d, not where %d ended", i, au.Offset, i-1)
				}
			}
			if !c.ts {
				// An elementary stream is its access units back to back.
				file, _ := os.ReadFile(path)
				if got := bytes.Join(dataOf(aus), nil); !bytes.Equal(got, bytes.TrimRight(file, "\x00")) {
					t.Errorf("the access units joined are %d bytes, the file %d: bytes lost or moved", len(got), len(file))
				}
			}
		})
	}
}

func dataOf(aus []AccessUnit) [][]byte {
	out := make([][]byte, len(aus))
	for i, au := range aus {
		out[i] = au.Data
	}
	return out
}

// ffprobe is the peer: the same pictures, keys and PTS as its packets, and
// sizes within the one zero byte of a four-byte start code that ffmpeg
// counts with the picture before.
func TestClipsAgreeWithFFprobe(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, c := range clips {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join("testdata", c.name)
			out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,size,flags", "-of", "csv=p=0", path).Output()
			if err != nil {
				t.Fatal(err)
			}
			r, err := Open(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			aus := readAll(t, r)
			lines := strings.Fields(strings.ReplaceAll(string(out), ",\n", "\n"))
			if len(lines) != len(aus) {
				t.Fatalf("ffprobe sees %d packets, we %d access units", len(lines), len(aus))
			}
			for i, l := range lines {
				f := strings.Split(strings.TrimRight(l, ","), ",")
				size, _ := strconv.Atoi(f[1])
				if d := len(aus[i].Data) - size; d < -1 || d > 1 {
					t.Errorf("access unit %d: %d bytes, ffprobe %d", i, len(aus[i].Data), size)
				}
				if key := strings.HasPrefix(f[2], "K"); key != aus[i].Key {
					t.Errorf("access unit %d: key %v, ffprobe %v", i, aus[i].Key, key)
				}
				if c.ts {
					if pts, _ := strconv.ParseInt(f[0], 10, 64); pts != aus[i].PTS {
						t.Errorf("access unit %d: PTS %d, ffprobe %d", i, aus[i].PTS, pts)
					}
				}
			}
		})
	}
}

// Reads of any size give the same access units (a start code split
// between two reads, a buffer compacted under a partial picture).
func TestOneByteReads(t *testing.T) {
	for _, c := range clips[:3] {
		data, _ := os.ReadFile(filepath.Join("testdata", c.name))
		whole := readAll(t, NewAnnexB(bytes.NewReader(data), c.codec))
		bytewise := readAll(t, NewAnnexB(iotest.OneByteReader(bytes.NewReader(data)), c.codec))
		if len(whole) != len(bytewise) {
			t.Fatalf("%s: %d access units read whole, %d a byte at a time", c.name, len(whole), len(bytewise))
		}
		for i := range whole {
			if !bytes.Equal(whole[i].Data, bytewise[i].Data) || whole[i].Offset != bytewise[i].Offset {
				t.Fatalf("%s: access unit %d differs", c.name, i)
			}
		}
	}
}

func TestRewindReadsTheSameAgain(t *testing.T) {
	for _, c := range clips {
		r, err := Open(filepath.Join("testdata", c.name), c.codec)
		if err != nil {
			t.Fatal(err)
		}
		a := readAll(t, r)
		if err := r.Rewind(); err != nil {
			t.Fatal(err)
		}
		b := readAll(t, r)
		r.Close()
		if len(a) != len(b) {
			t.Fatalf("%s: %d then %d access units", c.name, len(a), len(b))
		}
		for i := range a {
			if !bytes.Equal(a[i].Data, b[i].Data) || a[i].PTS != b[i].PTS || a[i].Index != b[i].Index {
				t.Fatalf("%s: access unit %d differs on the second pass", c.name, i)
			}
		}
	}
}

// The access units are slices of the read buffer, not copies.
func TestAccessUnitsAreNotCopied(t *testing.T) {
	data, _ := os.ReadFile("testdata/hevc8.hevc")
	r := NewAnnexB(bytes.NewReader(data), HEVC)
	au, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if &au.Data[0] != &r.buf[0] {
		t.Error("the first access unit is not the start of the read buffer")
	}
	if testing.AllocsPerRun(20, func() {
		if _, err := r.Next(); err == io.EOF {
			r.seek.Seek(0, io.SeekStart)
			r.Rewind()
		}
	}) > 0 {
		t.Error("Next allocates")
	}
}

// nal builds an Annex B NAL unit with a four-byte start code.
func nal(b ...byte) []byte { return append([]byte{0, 0, 0, 1}, b...) }

func TestBoundaryRules(t *testing.T) {
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	// H.264 NAL headers: 0x67 SPS, 0x68 PPS, 0x06 SEI, 0x09 AUD, 0x65 IDR
	// slice, 0x41 slice; the next byte's top bit is first_mb_in_slice = 0.
	for _, tc := range []struct {
		name  string
		codec Codec
		data  []byte
		sizes []int // NAL units per access unit
	}{
		{"h264 slices without delimiters", H264,
			cat(nal(0x65, 0x88, 1), nal(0x41, 0x9a, 1), nal(0x41, 0x9a, 2)), []int{1, 1, 1}},
		{"h264 second slice of a picture", H264,
			cat(nal(0x65, 0x88, 1), nal(0x65, 0x40, 1), nal(0x41, 0x9a, 1), nal(0x41, 0x20, 2)), []int{2, 2}},
		{"h264 parameter sets and SEI start the next picture", H264,
			cat(nal(0x67, 0x42, 0, 0x1e, 0xf4), nal(0x68, 0xce), nal(0x65, 0x88), nal(0x06, 5, 1, 0x80), nal(0x41, 0x9a)), []int{3, 2}},
		{"h264 delimiters", H264,
			cat(nal(0x09, 0xf0), nal(0x65, 0x88), nal(0x0c, 0xff), nal(0x09, 0xf0), nal(0x41, 0x9a)), []int{3, 2}},
		{"h264 three-byte start codes and trailing zeros", H264,
			cat([]byte{0, 0, 1, 0x65, 0x88, 0, 0, 0}, []byte{0, 0, 1, 0x41, 0x9a, 7}, []byte{0, 0}), []int{1, 1}},
		// HEVC NAL headers (two bytes): 0x40 VPS, 0x42 SPS, 0x44 PPS, 0x4e
		// prefix SEI, 0x50 suffix SEI, 0x46 AUD, 0x26 IDR_W_RADL, 0x02
		// TRAIL_R; the third byte's top bit is first_slice_segment_in_pic_flag.
		{"hevc slices", HEVC,
			cat(nal(0x26, 1, 0xaf), nal(0x02, 1, 0xd0), nal(0x02, 1, 0x50), nal(0x02, 1, 0xd0)), []int{1, 2, 1}},
		{"hevc suffix SEI stays, prefix SEI starts", HEVC,
			cat(nal(0x26, 1, 0xaf), nal(0x50, 1, 5), nal(0x4e, 1, 5), nal(0x02, 1, 0xd0)), []int{2, 2}},
		{"hevc delimiters", HEVC,
			cat(nal(0x46, 1, 0x50), nal(0x40, 1, 0x0c), nal(0x26, 1, 0xaf), nal(0x46, 1, 0x50), nal(0x02, 1, 0xd0)), []int{3, 2}},
		{"hevc layer 1 slices stay with their picture", HEVC,
			cat(nal(0x26, 1, 0xaf), nal(0x02, 9, 0xd0), nal(0x02, 1, 0xd0)), []int{2, 1}},
		{"garbage before the first start code", H264,
			cat([]byte{0xde, 0xad, 0xbe, 0xef}, nal(0x65, 0x88), nal(0x41, 0x9a)), []int{1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			aus := readAll(t, NewAnnexB(bytes.NewReader(tc.data), tc.codec))
			var got []int
			for _, au := range aus {
				got = append(got, bytes.Count(au.Data, []byte{0, 0, 1}))
			}
			if !equalInts(got, tc.sizes) {
				t.Errorf("NAL units per access unit %v, want %v", got, tc.sizes)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestOpenSaysWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hevc, _ := os.ReadFile("testdata/hevc8.hevc")
	ts, _ := os.ReadFile("testdata/hevc8.ts")
	for _, tc := range []struct {
		path string
		want Codec
		msg  string
	}{
		{filepath.Join(dir, "missing.hevc"), 0, "no such file"},
		{write("empty.hevc", nil), 0, "holds no HEVC sequence parameter set"},
		{write("noise.264", bytes.Repeat([]byte{0x5a, 0xa5, 0x33}, 5000)), 0, "holds no H.264 sequence parameter set"},
		{write("clip.bin", hevc), 0, "cannot tell H.264 from HEVC by its name"},
		{write("wrong.264", hevc), 0, "no H.264 stream that can be decoded"},
		{write("headless.hevc", hevc[bytes.Index(hevc, []byte{0, 0, 1, 0x28}):]), 0, "first picture comes before any HEVC sequence parameter set"},
		{write("video.ts", ts), H264, "carries [HEVC] video, no H.264"},
		{write("nopmt.ts", bytes.Repeat(append([]byte{0x47, 0x1f, 0xff, 0x10}, make([]byte, 184)...), 20)), 0, "no H.264 or HEVC stream in a program map"},
	} {
		r, err := Open(tc.path, tc.want)
		if err == nil {
			r.Close()
			t.Errorf("%s: opened", tc.path)
			continue
		}
		if !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), filepath.Base(tc.path)) {
			t.Errorf("%s: %q, want the file named and %q", tc.path, err, tc.msg)
		}
	}
	// The name is only a hint when the codec is known.
	r, err := Open(write("clip.bin", hevc), HEVC)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := Open(write("wrong.ts", hevc), 0); err != nil && errors.Is(err, ErrNoStream) {
		t.Logf("an elementary stream named .ts: %v", err)
	}
}

func TestParseCodec(t *testing.T) {
	for s, want := range map[string]Codec{"hevc": HEVC, "h264": H264, "h265": HEVC} {
		if c, err := ParseCodec(s); err != nil || c != want {
			t.Errorf("%s: %v %v", s, c, err)
		}
	}
	if _, err := ParseCodec("vp9"); err == nil || !strings.Contains(err.Error(), "h264 or hevc") {
		t.Errorf("vp9: %v", err)
	}
}
