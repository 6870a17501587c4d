package value

import (
	"encoding/json"
	"strings"
	"testing"
)

// The plan's typed values are spelt in JSON as the plan always spelt
// them, and read back to the same values.
func TestTypedValuesKeepTheirSpelling(t *testing.T) {
	type doc struct {
		Size   Size        `json:"size"`
		Rate   Rational    `json:"frame_rate"`
		Format PixelFormat `json:"format"`
		Colour Colour      `json:"colour"`
		None   Size        `json:"none,omitzero"`
	}
	in := doc{Size{1920, 1080}, Rational{30000, 1001}, P010, Colour{"bt2020", "pq", "bt2020nc", "limited"}, Size{}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"size":"1920x1080","frame_rate":"30000/1001","format":"p010","colour":"bt2020/pq/bt2020nc/limited"}`
	if string(b) != want {
		t.Fatalf("marshalled %s, want %s", b, want)
	}
	var out doc
	if err := json.Unmarshal(b, &out); err != nil || out != in {
		t.Fatalf("read back %+v, %v; want %+v", out, err, in)
	}
	if _, err := json.Marshal(doc{}); err == nil || !strings.Contains(err.Error(), "no pixel format 0") {
		t.Errorf("a document with no pixel format marshalled: %v", err)
	}
}

// Whatever ParseColour takes it spells back the same, and reads again to
// the same tags; whatever it refuses, it says what colour it refused.
func FuzzParseColour(f *testing.F) {
	for _, s := range []string{"bt709/bt709/bt709/limited", "bt2020/pq/bt2020nc/full", "", "bt709", "a/b/c/d", "bt709/bt709/bt709/limited/x", "///"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseColour(s)
		if err != nil {
			if !strings.Contains(err.Error(), "colour ") {
				t.Fatalf("%q: the error names no colour: %v", s, err)
			}
			return
		}
		if c.String() != s {
			t.Fatalf("%q reads as %+v, which spells %q", s, c, c.String())
		}
		if d, err := ParseColour(c.String()); err != nil || d != c {
			t.Fatalf("%q: read again %+v, %v", s, d, err)
		}
	})
}
