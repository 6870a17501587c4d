package lang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEarlierRingSizeIsReadAsTheFrameQueue(t *testing.T) {
	cases := []struct {
		canvas string
		queue  int
		err    string
	}{
		{"browser_ring_size = 16", 9, ""},
		{"browser_ring_size = 9", 9, ""},
		{"browser_ring_size = 4", 4, ""},
		{"browser_frame_queue = 5", 5, ""},
		{"", 9, ""},
		{"browser_ring_size = 0", 0, "between 1 and"},
		{"browser_ring_size = 12\n  browser_frame_queue = 6", 0, "remove browser_ring_size"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		src := "show {\n  name = \"r\"\n  size = \"320x180\"\n  frame_rate = \"30\"\n}\ncanvas {\n  " + c.canvas + "\n}\n"
		path := filepath.Join(dir, "show.hcl")
		os.WriteFile(path, []byte(src), 0o644)
		s, diags := Load([]string{path}, Options{})
		if c.err != "" {
			if !diags.HasErrors() || !strings.Contains(diags.Error(), c.err) {
				t.Errorf("%q: got %v, want an error containing %q", c.canvas, diags, c.err)
			}
			continue
		}
		if diags.HasErrors() {
			t.Errorf("%q: %v", c.canvas, diags)
			continue
		}
		if q := s.Canvas.Int("browser_frame_queue"); q != c.queue {
			t.Errorf("%q: browser_frame_queue %d, want %d", c.canvas, q, c.queue)
		}
		if _, ok := s.Canvas.Settings["browser_ring_size"]; ok {
			t.Errorf("%q: the earlier key reached the settings (and the plan)", c.canvas)
		}
	}
	if _, ok := DefaultCanvas().Settings["browser_ring_size"]; ok {
		t.Error("the default canvas carries the earlier key")
	}
}
