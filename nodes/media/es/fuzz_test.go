package es

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzAnnexB: any bytes split into access units that lie back to back from
// the first start code, each starting with a start code, in either codec;
// nothing panics.
func FuzzAnnexB(f *testing.F) {
	for _, c := range clips[:3] {
		data, _ := os.ReadFile(filepath.Join("testdata", c.name))
		f.Add(data[:min(len(data), 4000)], c.codec == HEVC)
	}
	f.Add(append(nal(0x65, 0x88, 0, 0, 3, 1), nal(0x41, 0x9a)...), false)
	f.Add([]byte{0, 0, 1, 0x46, 1, 0x50, 0, 0, 0, 1, 0x26, 1, 0xaf, 0, 0}, true)
	f.Fuzz(func(t *testing.T, data []byte, hevc bool) {
		c := H264
		if hevc {
			c = HEVC
		}
		r := NewAnnexB(bytes.NewReader(data), c)
		next := int64(-1)
		for i := 0; ; i++ {
			au, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if next >= 0 && au.Offset != next {
				t.Fatalf("access unit %d at %d, the last ended at %d", i, au.Offset, next)
			}
			if !bytes.Equal(au.Data, data[au.Offset:au.Offset+int64(len(au.Data))]) {
				t.Fatalf("access unit %d is not the stream's bytes at %d", i, au.Offset)
			}
			if k := bytes.Index(au.Data, startCode); k < 0 || len(bytes.TrimLeft(au.Data[:k], "\x00")) > 0 {
				t.Fatalf("access unit %d does not start with a start code: % x", i, au.Data[:min(8, len(au.Data))])
			}
			checkNALs(t, au)
			next = au.Offset + int64(len(au.Data))
			if i > len(data) {
				t.Fatal("more access units than bytes")
			}
		}
		if next >= 0 {
			if rest := bytes.TrimRight(data[next:], "\x00"); len(rest) > 0 {
				t.Fatalf("%d bytes after the last access unit", len(rest))
			}
		}
	})
}

// FuzzSPS: parameter sets of any content are parsed or refused, never
// panic, and what is accepted is a picture size onair could hold.
func FuzzSPS(f *testing.F) {
	for _, c := range clips[:3] {
		r, err := Open(filepath.Join("testdata", c.name), 0)
		if err != nil {
			f.Fatal(err)
		}
		au, _ := r.Next()
		r.Close()
		f.Add(au.Data, c.codec == HEVC)
	}
	f.Fuzz(func(t *testing.T, nal []byte, hevc bool) {
		c := H264
		if hevc {
			c = HEVC
		}
		var scratch []byte
		info, err := parseSPS(c, nal, &scratch)
		if err == nil && (info.Width <= 0 || info.Height <= 0 || info.Width > 16384 || info.Height > 16384) {
			t.Fatalf("accepted %+v", info)
		}
	})
}

// FuzzTS: transport streams of any content are read or refused, never
// panic or loop.
func FuzzTS(f *testing.F) {
	for _, c := range clips[3:] {
		data, _ := os.ReadFile(filepath.Join("testdata", c.name))
		f.Add(data[:min(len(data), 188*40)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src, c, err := newTSSource(bytes.NewReader(data), false, 0)
		if err != nil {
			return
		}
		r := newReader(c)
		r.ps = src
		for i := 0; ; i++ {
			_, err := r.Next()
			if err != nil {
				return
			}
			if i > len(data) {
				t.Fatal("more access units than bytes")
			}
		}
	})
}

// FuzzLive: a live transport stream (a network input's bytes) is read to
// its end without a panic, as many access units at most as bytes.
func FuzzLive(f *testing.F) {
	for _, c := range clips[3:] {
		data, _ := os.ReadFile(filepath.Join("testdata", c.name))
		f.Add(data[188*3 : min(len(data), 188*40)]) // joined mid-stream, as a receiver does
	}
	for _, name := range []string{"h264.264", "hevc8.hevc"} { // a live elementary stream
		data, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(data[:min(len(data), 4096)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewLive(bytes.NewReader(data), "fuzz", 0)
		if err != nil {
			return
		}
		for i := 0; ; i++ {
			if _, err := r.Next(); err != nil {
				return
			}
			if i > len(data) {
				t.Fatal("more access units than bytes")
			}
		}
	})
}

// FuzzTSSource: the transport stream reader on any bytes, as a file and as
// a live stream, never panics, hands on no more payload than the stream
// holds and no more PES than it holds packets. Seeds: the clips whole,
// joined mid-stream, and damaged (packets repeated, lost, cut short,
// garbage between them).
func FuzzTSSource(f *testing.F) {
	for _, c := range clips[3:] {
		data, _ := os.ReadFile(filepath.Join("testdata", c.name))
		data = data[:min(len(data), 188*60)]
		f.Add(data)
		f.Add(data[188*3:])
		f.Add(bytes.Join([][]byte{data[:188*20], data[188*19 : 188*30], data[188*31:]}, nil))
		f.Add(bytes.Join([][]byte{data[:188*25], {0x47, 0x01, 0x00}, data[188*25+100:]}, nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, live := range []bool{false, true} {
			src, _, err := newTSSource(bytes.NewReader(data), live, 0)
			if err != nil {
				continue
			}
			n, total := 0, 0
			for {
				b, _, _, err := src.next()
				if err != nil {
					break
				}
				n, total = n+1, total+len(b)
				if len(b) == 0 || total > len(data) || n > len(data)/tsPacket {
					t.Fatalf("PES %d: %d bytes, %d in all, from %d bytes of stream", n, len(b), total, len(data))
				}
			}
		}
	})
}
