package frame

import "testing"

func TestStampSetOf(t *testing.T) {
	s, err := StampSetOf([]string{"decode_time", "input_rec_time"})
	if err != nil || !s.Has(DecodeTime) || !s.Has(InputRecTime) || s.Has(PaceTime) {
		t.Fatalf("set %b, err %v", s, err)
	}
	if _, err := StampSetOf([]string{"decode_tme"}); err == nil {
		t.Error("an unknown key was taken")
	}
	var st Stamps
	if _, ok := st.Get(DecodeTime); ok {
		t.Error("a fresh frame carries a stamp")
	}
	st.Stamp(DecodeTime, 42)
	var seen []string
	st.Each(func(k StampKey, ns int64) { seen = append(seen, k.String()) })
	if ns, ok := st.Get(DecodeTime); !ok || ns != 42 || len(seen) != 1 || seen[0] != "decode_time" {
		t.Errorf("stamps %+v, each %v", st, seen)
	}
}
