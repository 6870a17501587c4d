package cli

import (
	"strings"
	"testing"
)

func TestProducerFlagsSayWhatIsWrong(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "-socket PATH is required"},
		{[]string{"-socket", "x.sock", "-size", "33x20"}, "-size"},
		{[]string{"-socket", "x.sock", "-frames", "-1"}, "must be 0 or more"},
		{[]string{"-socket", "x.sock", "extra"}, "unexpected argument"},
		{[]string{"-pattern", "-socket", "x.sock", "-url", "http://x"}, "leave out -url and -chromium"},
		{[]string{"-pattern", "-socket", "x.sock", "-format", "yuv"}, `-format "yuv": use rgba, bgra or nv12`},
		{[]string{"-pattern", "-socket", "x.sock", "-rate", "fast"}, "-rate"},
	}
	for _, c := range cases {
		rc, _, errs := runCLI(t, append([]string{"producer"}, c.args...)...)
		if rc != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("producer %v: rc %d, stderr %q; want 2 and %q", c.args, rc, errs, c.want)
		}
	}
}
