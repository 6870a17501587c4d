package ipc

import (
	"fmt"
	"strings"
	"testing"
)

// TestReturnQueue drives the queue with finished (f) and arrived (a) steps
// and checks what goes back after each: the seed's three rules.
func TestReturnQueue(t *testing.T) {
	cases := []struct {
		name  string
		limit int
		steps string // f: a frame finished (numbered in order), a: a frame arrived, r: retire
		want  string // what went back after each step, "-" for nothing
	}{
		{"0 returns every frame at once", 0, "f f a f a r", "1 2 - 3 - -"},
		{"one back per arrival", 3, "f f f a a a a", "- - - 1 2 3 -"},
		{"beyond the limit the oldest goes at once", 3, "f f f f f a", "- - - 1 2 3"},
		{"bunches are evened out", 3, "a f f f a a f a a", "- - - - 1 2 - 3 4"},
		{"retire sends everything, oldest first", 3, "f f a f r a", "- - 1 - 2,3 -"},
		{"one", 1, "f f a a", "- 1 2 -"},
	}
	for _, c := range cases {
		q := NewReturnQueue(c.limit)
		var got []string
		n := uint64(0)
		for _, s := range strings.Fields(c.steps) {
			var sent []Release
			switch s {
			case "f":
				n++
				sent = q.Finished(Release{Buffer: uint32(n), Sequence: n}, nil)
			case "a":
				sent = q.Arrived(nil)
			case "r":
				sent = q.Retire(nil)
			}
			if len(sent) == 0 {
				got = append(got, "-")
				continue
			}
			var ids []string
			for _, r := range sent {
				ids = append(ids, fmt.Sprint(r.Sequence))
			}
			got = append(got, strings.Join(ids, ","))
			if q.Len() > c.limit {
				t.Errorf("%s: %d waiting, limit %d", c.name, q.Len(), c.limit)
			}
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: went back %q, want %q", c.name, g, c.want)
		}
	}
}

func TestReturnQueueClampsItsLimit(t *testing.T) {
	if NewReturnQueue(-1).Limit() != 0 || NewReturnQueue(1000).Limit() != MaxReturnQueue {
		t.Fatal("limits are not clamped to 0..64")
	}
}
