package compiler

import (
	"slices"
	"testing"

	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
)

// canvasParams lists the canvas keys the compiler copies into a node's
// param (build.go, fuse_decode_loops.go): the show language's schema and
// the node registry must agree on each one's type, default and range (or
// values), or a saved plan without the param would run with another value
// than the show would have given it.
var canvasParams = []struct{ canvas, kind, param string }{
	{"input_poll_ms", "compositor", "input_poll_ms"},
	{"aux_input_poll_ms", "compositor", "input_poll_ms"},
	{"browser_frame_queue", "ipc_dmabuf_source", "frames_in_flight"},
	{"import_ttl_ms", "gpu_import", "import_ttl_ms"},
	{"nvdec_parser", "nvdec_file", "parser"}, // fuse_decode_loops.go
}

func TestCanvasAndRegistryAgree(t *testing.T) {
	var canvas *lang.Block
	for _, b := range lang.Schema {
		if b.Type == "canvas" {
			canvas = b
		}
	}
	if canvas == nil {
		t.Fatal("the schema has no canvas block")
	}
	for _, c := range canvasParams {
		a := canvas.Attr(c.canvas)
		k, ok := nodes.Lookup(c.kind)
		if a == nil || !ok {
			t.Fatalf("canvas.%s or kind %s is gone: update canvasParams", c.canvas, c.kind)
		}
		p, ok := k.Param(c.param)
		if !ok {
			t.Fatalf("%s has no param %s", c.kind, c.param)
		}
		if a.Default != p.Default {
			t.Errorf("canvas.%s defaults to %v, %s.%s to %v", c.canvas, a.Default, c.kind, c.param, p.Default)
		}
		if a.Type == lang.TypeEnum && p.Type == nodes.Enum {
			if !slices.Equal(a.Enum, p.Enum) {
				t.Errorf("canvas.%s may be %v, %s.%s %v", c.canvas, a.Enum, c.kind, c.param, p.Enum)
			}
			continue
		}
		if a.Type != lang.TypeInt || p.Type != nodes.Int {
			t.Errorf("canvas.%s is %v, %s.%s is %s: both must be whole numbers or both enums", c.canvas, a.Type, c.kind, c.param, p.Type)
			continue
		}
		if a.Range == nil || p.Min == nil || p.Max == nil || a.Range[0] != int64(*p.Min) || a.Range[1] != int64(*p.Max) {
			t.Errorf("canvas.%s and %s.%s declare different ranges", c.canvas, c.kind, c.param)
		}
	}
}
