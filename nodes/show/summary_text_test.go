package show

import (
	"bytes"
	"strings"
	"testing"
)

// TestSummaryTextColumns: the summary's counts start in one column however
// long a name is, and a count of one takes the singular.
func TestSummaryTextColumns(t *testing.T) {
	s := Summary{
		Buses:   []BusSummary{{Address: "bus.pgm", Kind: "program", Ticks: 300, Missed: 1}, {Address: "bus.aux", Kind: "aux", Ticks: 300, Missed: 2}},
		Outputs: []OutputSummary{{Address: "output.pgm", Kind: "record", Written: 300}},
		Sources: []SourceSummary{{Address: `source.camera_with_a_long_name["studio-b"]`, Paced: 300}, {Address: "source.one", Paced: 300}},
	}
	var b bytes.Buffer
	s.WriteText(&b)
	text := b.String()
	if !strings.Contains(text, " 1 missed deadline,") || !strings.Contains(text, " 2 missed deadlines,") {
		t.Errorf("the missed deadlines are not counted in words:\n%s", text)
	}
	col := -1
	for _, line := range strings.Split(text, "\n") {
		i := strings.Index(line, " frames")
		if i < 0 {
			continue
		}
		// The count's last digit sits just before " frames".
		if col >= 0 && i != col {
			t.Errorf("the counts are not in one column (%d, then %d):\n%s", col, i, text)
			break
		}
		col = i
	}
}
