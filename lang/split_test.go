package lang

import (
	"reflect"
	"testing"
)

func TestSplitShows(t *testing.T) {
	got := SplitShows([]string{"testdata/good/dir", "testdata/good/features.hcl", "../shows"})
	if len(got) < 4 || !reflect.DeepEqual(got[0], []string{"testdata/good/dir"}) || !reflect.DeepEqual(got[1], []string{"testdata/good/features.hcl"}) {
		t.Fatalf("SplitShows = %q", got)
	}
	for _, g := range got[2:] {
		if len(g) != 1 || g[0] == "../shows" {
			t.Errorf("shows/ should split into its files: %q", got)
		}
	}
}
