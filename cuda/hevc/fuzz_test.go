package hevc

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParser: whatever the bytes, Next returns pictures or an error and
// never panics, and a picture never decodes into a surface out of range.
func FuzzParser(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("..", "..", "nodes", "media", "es", "testdata", "hevc8.hevc"))
	if err != nil {
		f.Fatal(err)
	}
	aus := accessUnits(&testing.T{}, data)
	for _, au := range aus[:4] {
		f.Add(au)
	}
	f.Fuzz(func(t *testing.T, au []byte) {
		p := NewParser()
		p.SetSurfaces(8)
		// The stream's parameter sets first, then the fuzzed unit, twice.
		for _, in := range [][]byte{aus[0], au, au} {
			pics, _, err := p.Next(in, 0)
			if err != nil {
				continue
			}
			for _, pic := range pics {
				if pic.CurrPicIdx < 0 || pic.CurrPicIdx >= 8 {
					t.Fatalf("surface %d of 8", pic.CurrPicIdx)
				}
			}
		}
		p.Flush()
	})
}
