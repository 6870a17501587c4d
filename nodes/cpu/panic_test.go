package cpu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/metrics"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

// brokenPicture is a 640x360 frame whose luma plane holds one row: what a
// bug in a source or a converter could hand the compositor. Its format,
// size and metadata are right, so the layer checks let it through.
func brokenPicture(t testing.TB, f frame.Format) *frame.Frame {
	fr, err := frame.New(f, 640, 360)
	if err != nil {
		t.Fatal(err)
	}
	fr.Data[0] = fr.Data[0][:fr.Pitch[0]]
	return fr
}

// A band that panics on a bad layer is Render's error; every band has
// ended by then, and the workers draw the next picture as before.
func TestABandThatPanicsFailsTheRenderOnly(t *testing.T) {
	good, _ := frame.New(frame.NV12, 640, 360)
	tp, _ := media.NewTestPattern(media.TestPatternConfig{ID: "s", Format: frame.NV12, Width: 640, Height: 360, Rate: frame.Rational{Num: 30, Den: 1}})
	tp.Next(good)
	full := frame.Rect{W: 1280, H: 720}
	want, _ := frame.New(frame.NV12, 1280, 720)
	if err := NewCompositor().Render(want, []Layer{{Frame: good, Rect: full, Opacity: 1}}); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 4; n++ {
		p := NewParallel(n)
		dst, _ := frame.New(frame.NV12, 1280, 720)
		before := panics.Recovered()
		err := p.Render(dst, []Layer{{Frame: brokenPicture(t, frame.NV12), Rect: full, Opacity: 1}})
		var pe *panics.Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "panic in a band of the compositor") || !bytes.Contains(pe.Stack, []byte("renderBand")) {
			t.Fatalf("%d bands, a broken layer: %v; want a panic's error with its stack", n, err)
		}
		if got := panics.Recovered() - before; got < 1 || got > uint64(n) {
			t.Errorf("%d bands: %d panics counted", n, got)
		}
		for range 2 {
			if err := p.Render(dst, []Layer{{Frame: good, Rect: full, Opacity: 1}}); err != nil {
				t.Fatalf("%d bands, after the panic: %v", n, err)
			}
			if !bytes.Equal(dst.Data[0], want.Data[0]) || !bytes.Equal(dst.Data[1], want.Data[1]) {
				t.Fatalf("%d bands: the picture after the panic differs from one compositor's", n)
			}
		}
		p.Close()
	}
}

// pictureSource is a source kind for this test alone: a test pattern
// whose pictures are broken (brokenPicture) while *broken is true.
type pictureSource struct {
	tp     *media.TestPattern
	broken *atomic.Bool
}

func (b *pictureSource) Start(ctx *runtime.NodeContext[Frame]) error {
	ctx.Go(func() error {
		for !ctx.Stopping() {
			fr, err := frame.New(frame.NV12, 640, 360)
			if err != nil {
				return err
			}
			b.tp.Next(fr)
			if b.broken != nil && b.broken.Load() {
				fr.Data[0] = fr.Data[0][:fr.Pitch[0]]
			}
			if ok, _ := ctx.Put(0, fr); !ok {
				fr.Release()
			}
		}
		return nil
	})
	return nil
}

func (b *pictureSource) Stop() {}

const panicShow = `
show {
  name       = "panics"
  size       = "1280x720"
  frame_rate = "30"
}
source "test_pattern" "good" {
  pattern = "bars"
}
source "test_pattern" "broken" {
  pattern = "checker"
}
scene "broken" {
  layer {
    source = source.broken
  }
}
scene "good" {
  layer {
    source = source.good
  }
}
bus "program" "pgm" {
  scene = scene.broken
}
bus "aux" "mon" {
  scene = scene.good
}
output "null" "pgm" {
  bus = bus.pgm
}
output "null" "mon" {
  bus = bus.mon
}
`

// A picture that makes the Program bus's compositor panic (in a band of
// its drawing) fails that bus alone: its group restarts, the process
// lives, the other bus goes on drawing, and /status, /metrics and the log
// say what happened; once the pictures are whole again, Program draws.
func TestACompositorPanicFailsItsBusAlone(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "show.hcl")
	if err := os.WriteFile(path, []byte(panicShow), 0o644); err != nil {
		t.Fatal(err)
	}
	p := compile(t, path, nil)
	be := Backend()
	var broken atomic.Bool
	be.Kinds["test_pattern"] = func(_ *show.State, n plan.Node, _ *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
		tp, err := media.NewTestPattern(media.TestPatternConfig{ID: n.Address, Format: frame.NV12, Width: 640, Height: 360, Rate: frame.Rational{Num: 30, Den: 1}})
		if err != nil {
			return nil, err
		}
		src := &pictureSource{tp: tp}
		if n.Address == "source.broken" {
			src.broken = &broken
		}
		return src, nil
	}
	log := &logBuffer{}
	s, err := show.Start(context.Background(), be, p, nil, show.Options{BaseDir: dir}, slog.New(slog.NewTextHandler(log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	before := panics.Recovered()
	broken.Store(true)
	node := func(id string) runtime.NodeStatus {
		for _, n := range s.Exec.Status().Nodes {
			if n.ID == id {
				return n
			}
		}
		t.Fatalf("no node %s", id)
		return runtime.NodeStatus{}
	}
	group := func(name string) runtime.GroupStatus {
		for _, g := range s.Exec.Status().Groups {
			if g.Name == name {
				return g
			}
		}
		t.Fatalf("no group %s", name)
		return runtime.GroupStatus{}
	}
	testwait.Until(t, testwait.Bound, "Program's compositor to fail on a panic and its group to restart", func() bool {
		return node("bus.pgm/compositor").Panics >= 1 && group("bus.pgm").Restarts >= 1
	})
	monAt := busOf(s.State.Summary(), "bus.mon").Ticks
	testwait.Until(t, testwait.Bound, "the other bus to go on drawing", func() bool {
		return busOf(s.State.Summary(), "bus.mon").Ticks >= monAt+30
	})
	if n := node("bus.pgm/compositor"); !strings.Contains(n.LastError, "panic in a band of the compositor") || !strings.Contains(n.LastError, "bus.pgm tick") {
		t.Errorf("Program's compositor reports %q", n.LastError)
	}
	st, _ := json.Marshal(s.Status())
	if !bytes.Contains(st, []byte(`"panics_recovered":`)) || panics.Recovered() <= before || s.Exec.Status().Process.PanicsRecovered != panics.Recovered() {
		t.Errorf("/status's panics_recovered: %d (the process recovered %d, %d before)", s.Exec.Status().Process.PanicsRecovered, panics.Recovered(), before)
	}
	var got []string
	s.Collect(func(m metrics.Sample) {
		if strings.Contains(m.Name, "panics") {
			got = append(got, fmt.Sprintf("%s %v", m.Name, m.Labels))
		}
	})
	if len(got) != 2 || got[0] != "onair_node_panics_total [[node bus.pgm/compositor]]" || got[1] != "onair_panics_recovered_total []" {
		t.Errorf("/metrics: %q", got)
	}
	if l := log.String(); !strings.Contains(l, "recovered a panic") || !strings.Contains(l, "renderBand") {
		t.Errorf("the log has no stack of the panic:\n%s", l)
	}
	// Whole pictures again: the next restart stays up and Program draws.
	broken.Store(false)
	pgmAt := busOf(s.State.Summary(), "bus.pgm").Ticks
	testwait.Until(t, testwait.Bound, "Program to draw again after its restart", func() bool {
		return busOf(s.State.Summary(), "bus.pgm").Ticks >= pgmAt+30
	})
	if g := group("bus.pgm"); g.State != "running" || !g.Ready {
		t.Errorf("Program's group after it drew again: %+v", g)
	}
}
