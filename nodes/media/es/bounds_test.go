package es

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// filler reads n bytes of 0xaa: slice data with no start code in it.
type filler struct{ n int }

func (f *filler) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, io.EOF
	}
	m := min(len(p), f.n)
	for i := range p[:m] {
		p[i] = 0xaa
	}
	f.n -= m
	return m, nil
}

// longUnitStream is the first access unit of the H.264 clip (its
// parameter sets and IDR picture), then a picture of exactly size bytes
// (a three-byte start code, a slice header starting a picture, filler),
// then one small picture.
func longUnitStream(t *testing.T, size int) io.Reader {
	t.Helper()
	r, err := Open("testdata/h264.264", H264)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	head := append([]byte(nil), first.Data...)
	head = append(head, 0, 0, 1, 0x41, 0x9a)
	return io.MultiReader(bytes.NewReader(head), &filler{size - 5}, bytes.NewReader([]byte{0, 0, 1, 0x41, 0x9a, 0x55}))
}

// The reader's buffer holds one access unit of at most MaxAccessUnit bytes
// and one read past it, never more.
func checkBuffer(t *testing.T, r *Reader) {
	t.Helper()
	if c := cap(r.buf); c > MaxAccessUnit+initialBuffer {
		t.Errorf("the read buffer grew to %d bytes, past %d (MaxAccessUnit and one read)", c, MaxAccessUnit+initialBuffer)
	}
}

func TestAccessUnitOfTheLimitIsRead(t *testing.T) {
	r := NewAnnexB(longUnitStream(t, MaxAccessUnit), H264)
	var sizes []int
	for {
		au, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(au.Data))
	}
	if len(sizes) != 3 || sizes[1] != MaxAccessUnit || sizes[2] != 6 {
		t.Errorf("access units of %v bytes, want the clip's first, %d and 6", sizes, MaxAccessUnit)
	}
	checkBuffer(t, r)
}

func TestAccessUnitOverTheLimitIsRefused(t *testing.T) {
	// Through a file, as ffmpeg_decode and the readers open one.
	path := filepath.Join(t.TempDir(), "long.264")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := io.Copy(w, longUnitStream(t, MaxAccessUnit+1)); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if au, err := r.Next(); err != nil || au.Index != 0 || au.Info == nil {
		t.Fatalf("first access unit: %v, %v; want the clip's first picture", au.Index, err)
	}
	_, err = r.Next()
	if err == nil || !strings.Contains(err.Error(), "runs past 64 MiB") || !strings.Contains(err.Error(), "access unit 1 ") || !strings.Contains(err.Error(), "long.264") {
		t.Fatalf("the access unit one byte over the limit: %v; want it refused, with the file, the unit and the limit named", err)
	}
	checkBuffer(t, r)
	// Refused for good: no later call hands on what was gathered.
	if au, err2 := r.Next(); err2 == nil || len(au.Data) != 0 {
		t.Errorf("after the refusal: %d bytes, %v", len(au.Data), err2)
	}
}
