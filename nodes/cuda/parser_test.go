package cuda

import (
	"strings"
	"testing"

	"github.com/onairhq/onair/plan"
)

// An nvdec_file's param parser (canvas nvdec_parser) picks onair's HEVC
// parser; absent is NVIDIA's, the kind's default; a value the kind does
// not know (a plan edited by hand) is an error naming node, param and
// values, not a silent fallback.
func TestNVDECFileParserParam(t *testing.T) {
	cases := []struct {
		params  map[string]any
		own     bool
		wantErr string
	}{
		{map[string]any{}, false, ""},
		{map[string]any{"parser": "nvidia"}, false, ""},
		{map[string]any{"parser": "onair"}, true, ""},
		{map[string]any{"parser": "ffmpeg"}, false, "node source.cam/nvdec_file: nvdec_file: parser must be one of nvidia | onair, got ffmpeg"},
	}
	for _, c := range cases {
		n := plan.Node{ID: "source.cam/nvdec_file", Kind: "nvdec_file", Address: "source.cam", Params: c.params}
		own, err := ownParser(&n)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%v: error %v, want %q", c.params, err, c.wantErr)
			}
			continue
		}
		if err != nil || own != c.own {
			t.Errorf("%v: own parser %v (%v), want %v", c.params, own, err, c.own)
		}
	}
}
