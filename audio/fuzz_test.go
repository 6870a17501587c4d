package audio

import "testing"

// FuzzParseStrip: a compositor's audio_strips entry (from a plan, which
// may be posted) never panics; one it takes is a strip in range, which
// Format writes back to an entry that parses to the same strip.
func FuzzParseStrip(f *testing.F) {
	for _, s := range []string{"source.cam", "source.cam gain_db=-6 mode=always mute=true pan=-0.5", "source.x gain_db=NaN", "x pan=2", "", "a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		src, s, err := ParseStrip(entry)
		if err != nil {
			return
		}
		if err := s.Check(); err != nil {
			t.Fatalf("%q parsed to a strip out of range: %v", entry, err)
		}
		src2, s2, err := ParseStrip(s.Format(src))
		if err != nil || src2 != src || s2 != s {
			t.Fatalf("%q: %q %+v wrote %q, which reads %q %+v, %v", entry, src, s, s.Format(src), src2, s2, err)
		}
	})
}
