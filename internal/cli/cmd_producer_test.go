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
		{[]string{"-socket", "x.sock", "-gpu"}, "go with -pattern"},
		{[]string{"-socket", "x.sock", "-pattern", "-count", "4"}, "needs a -socket with %d"},
		{[]string{"-socket", "x.sock", "-pattern", "-pool", "lifo"}, "chromium or steady"},
		{[]string{"-socket", "x.sock", "-pattern", "-fps", "0"}, "-fps 0"},
	}
	for _, c := range cases {
		rc, _, errs := runCLI(t, append([]string{"producer"}, c.args...)...)
		if rc != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("producer %v: rc %d, stderr %q; want 2 and %q", c.args, rc, errs, c.want)
		}
	}
}
