package hevc

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
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

// FuzzParserNALs: NextNALs told NAL positions that may be anywhere (in
// order or not, inside the unit or not) returns pictures or an error, never
// panics, and what it returns for a unit is what Next returns for it when
// the positions are where all its start codes end (as es.AccessUnit.NALs
// lists them: a start code with nothing after it too).
func FuzzParserNALs(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("..", "..", "nodes", "media", "es", "testdata", "hevc8.hevc"))
	if err != nil {
		f.Fatal(err)
	}
	aus := accessUnits(&testing.T{}, data)
	for _, au := range aus[:3] {
		var pos []byte
		nalUnits(au, nil, func(_ []byte, _, header int) error {
			pos = binary.LittleEndian.AppendUint32(pos, uint32(header))
			return nil
		})
		f.Add(au, pos)
	}
	f.Fuzz(func(t *testing.T, au, pos []byte) {
		var nals []int32
		for len(pos) >= 4 {
			nals = append(nals, int32(binary.LittleEndian.Uint32(pos)))
			pos = pos[4:]
		}
		told, searched := NewParser(), NewParser()
		told.SetSurfaces(8)
		searched.SetSurfaces(8)
		fits := nalsFit(au, nals)
		var found []int32 // where every start code ends, as es.AccessUnit.NALs says
		for from := 0; ; {
			i := bytes.Index(au[from:], startCode)
			if i < 0 {
				break
			}
			from += i + 3
			found = append(found, int32(from))
		}
		for k, in := range [][]byte{aus[0], au, au} {
			n := nals
			if k == 0 { // the stream's parameter sets, searched
				n = nil
			}
			pics, _, err := told.NextNALs(in, n, 0)
			want, _, werr := searched.Next(in, 0)
			if fits && slices.Equal(nals, found) && (err == nil) != (werr == nil) {
				t.Fatalf("told where the start codes end: error %v, searching: %v", err, werr)
			}
			if err != nil {
				continue
			}
			for i, pic := range pics {
				if pic.CurrPicIdx < 0 || pic.CurrPicIdx >= 8 {
					t.Fatalf("surface %d of 8", pic.CurrPicIdx)
				}
				if fits && slices.Equal(nals, found) && werr == nil && (i >= len(want) || !bytes.Equal(pic.Data, want[i].Data)) {
					t.Fatalf("told where the start codes end, picture %d's data differs from searching's", i)
				}
			}
		}
	})
}
