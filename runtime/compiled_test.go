package runtime

import (
	"context"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/plan"
)

// TestCompiledPlanRunsWithTestNodes compiles a real show (lang and the
// compiler, as `onair run` does) and executes its plan with the test nodes
// standing in for the backend's: synthetic sources for test_pattern,
// relays for the pacers and loop fan-outs, a counting compositor for every
// bus and a counting sink for every output. Once every edge has carried a
// frame, the run stops, and every frame is accounted for on every edge: produced = consumed + still queued, and
// drops only where the edge's policy allows them.
func TestCompiledPlanRunsWithTestNodes(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	show := filepath.Join(dir, "show.hcl")
	os.WriteFile(show, []byte(`
show {
  name       = "compiled"
  size       = "320x180"
  frame_rate = "30"
}
canvas {
  pacing_loops = 2
}
source "test_pattern" "cam" {
  count = 6
}
scene "grid" {
  dynamic "layer" {
    for_each = range(4)
    content {
      source = source.cam[layer.value]
      rect   = [(layer.value % 2) * 160, floor(layer.value / 2) * 90, 160, 90]
    }
  }
}
scene "wide" {
  layer {
    source = source.cam[4]
  }
}
bus "program" "pgm" {
  scene = scene.grid
}
bus "aux" "mon" {
  source = source.cam[5]
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
output "null" "mon" {
  bus = bus.mon
}
`), 0o644)
	s, diags := lang.Load([]string{show}, lang.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	res, cdiags := compiler.Compile(s, compiler.Options{Target: &testLowering, ToolVersion: "test"})
	if cdiags.HasErrors() {
		t.Fatal(cdiags)
	}
	p := res.Plan
	w := newWorld()
	stand := map[string]string{
		"realtime": "relay", "one_to_many_nb": "relay", "one_to_many": "relay",
		"compositor": "compositor", "output_record": "sink", "output_null": "sink",
	}
	base := w.lookup()
	lookup := func(kind string) (Constructor[*tframe], bool) {
		if kind == "test_pattern" { // a generator on a thread of its own
			return w.newThreadSource, true
		}
		if k, ok := stand[kind]; ok {
			return base(k)
		}
		return nil, false
	}
	x, err := NewExecutor(p, lookup, Options{ReadyTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, testwait.Bound, "every edge to carry a frame", func() bool {
		for _, e := range x.Status().Edges {
			if e.EnqueuedTotal == 0 {
				return false
			}
		}
		return true
	})
	if err := x.Stop(); err != nil {
		t.Fatal(err)
	}
	st := x.Status()
	if len(st.Loops) != 4 || len(p.Loops) != 4 || len(st.Edges) != len(p.Edges) { // default, outputs (the null output), pacing_0 and _1
		t.Fatalf("ran %d loops and %d edges; the plan has %d loops and %d edges", len(st.Loops), len(st.Edges), len(p.Loops), len(p.Edges))
	}
	checkAccounting(t, w, st)
}

// threadSource makes frames on its own thread as fast as its (block) edge
// takes them, as a generator placed on a thread does.
type threadSource struct{ w *world }

func (w *world) newThreadSource(n plan.Node, ctx *NodeContext[*tframe]) (Node[*tframe], error) {
	return &threadSource{w: w}, nil
}

func (s *threadSource) Start(ctx *NodeContext[*tframe]) error {
	ctx.Go(func() error {
		for seq := int64(0); !ctx.Stopping(); seq++ {
			f := &tframe{src: ctx.ID(), seq: seq, pts: seq}
			ok, err := ctx.Put(0, f)
			switch {
			case ok:
				s.w.add(s.w.produced, ctx.Outputs[0].Name())
			case err == nil:
				s.w.add(s.w.dropped, ctx.Outputs[0].Name())
			}
		}
		return nil
	})
	return nil
}

func (s *threadSource) Stop() {}

// testLowering is the chain a test_pattern source becomes in host memory
// (what the CPU backend declares; runtime/ cannot import a backend).
var testLowering = nodes.Lowering{
	Backend: "test",
	Domain:  nodes.Host,
	Profile: "nvidia_l4",
	Chains: map[string]nodes.Chain{
		"test_pattern": {Links: []nodes.Link{nodes.L("test_pattern"), nodes.L("realtime"), nodes.L("one_to_many")}},
	},
}
