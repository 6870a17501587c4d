package es

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestLiveReadsAnElementaryStream: a live stream that starts with a start
// code is read as an elementary stream of the
// codec its first parameter set says, access unit for access unit as the
// file is.
func TestLiveReadsAnElementaryStream(t *testing.T) {
	for _, c := range clips {
		if c.ts {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join("testdata", c.name)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			live, err := NewLive(bytes.NewReader(data), "live", 0)
			if err != nil {
				t.Fatal(err)
			}
			file, err := Open(path, c.codec)
			if err != nil {
				t.Fatal(err)
			}
			defer file.Close()
			if live.Codec() != c.codec {
				t.Fatalf("codec %v, want %v", live.Codec(), c.codec)
			}
			for i := 0; ; i++ {
				want, werr := file.Next()
				got, gerr := live.Next()
				if werr == io.EOF && gerr == io.EOF {
					if i == 0 {
						t.Fatal("no access units")
					}
					return
				}
				if werr != nil || gerr != nil || !bytes.Equal(got.Data, want.Data) {
					t.Fatalf("access unit %d: live %d bytes (%v), file %d bytes (%v)", i, len(got.Data), gerr, len(want.Data), werr)
				}
			}
		})
	}
	if _, err := NewLive(bytes.NewReader([]byte{0, 0, 0, 1, 0x41, 1, 2, 3}), "live", 0); err == nil {
		t.Error("an elementary stream that starts with a slice was taken")
	}
}
