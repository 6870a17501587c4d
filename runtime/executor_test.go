package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/internal/value"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onairhq/onair/plan"
)

// tframe is the test's frame: no pixels, just where it came from.
type tframe struct {
	src  string
	inst int64 // which instance of the source made it (0 before a restart)
	seq  int64
	pts  int64
}

func (f *tframe) Timestamp() int64 { return f.pts }

// world holds what the test nodes count, shared by every instance.
type world struct {
	mu        sync.Mutex
	instances map[string]int64
	produced  map[string]int64 // per edge name: frames accepted
	dropped   map[string]int64 // per edge name: frames refused by a full drop edge
	blocked   map[string]int64 // per edge name: frames a loop source could not hand over (kept, retried)
	consumed  map[string]int64 // per edge name: frames taken
	firstSeen map[string][]*tframe
}

func newWorld() *world {
	return &world{instances: map[string]int64{}, produced: map[string]int64{}, dropped: map[string]int64{},
		blocked: map[string]int64{}, consumed: map[string]int64{}, firstSeen: map[string][]*tframe{}}
}

func (w *world) add(m map[string]int64, k string) {
	w.mu.Lock()
	m[k]++
	w.mu.Unlock()
}

func (w *world) lookup() Lookup[*tframe] {
	kinds := map[string]Constructor[*tframe]{
		"relay":       w.newRelay,
		"test_source": w.newSource,
		"compositor":  w.newCompositor,
		"sink":        w.newSink,
	}
	return func(kind string) (Constructor[*tframe], bool) { c, ok := kinds[kind]; return c, ok }
}

// testSource is paced on its loop at the show's frame rate, counting in
// 1/120000 s, and fans each frame out to every output from the loop.
type testSource struct {
	w       *world
	ctx     *NodeContext[*tframe]
	inst    int64
	failAt  int
	silent  bool
	after   string    // produce nothing until this node has been made
	pending []*tframe // per output: a frame a full block edge refused
}

func (w *world) newSource(n plan.Node, ctx *NodeContext[*tframe]) (Node[*tframe], error) {
	failAt := param(ctx.Plan.Params, "fail_at", -1)
	silent := param(ctx.Plan.Params, "silent", false)
	after := param(ctx.Plan.Params, "after", "")
	w.mu.Lock()
	inst := w.instances[n.ID]
	w.instances[n.ID]++
	w.mu.Unlock()
	return &testSource{w: w, ctx: ctx, inst: inst, failAt: failAt, silent: silent, after: after, pending: make([]*tframe, len(ctx.Outputs))}, nil
}

func (s *testSource) Start(ctx *NodeContext[*tframe]) error {
	period, err := ctx.FramePeriod()
	if err != nil {
		return err
	}
	step := period.Convert(1, Base120k)
	p, err := NewPacer(PacerConfig{TimeBase: Base120k})
	if err != nil {
		return err
	}
	_, err = ctx.Pace(p, 0, func(pts int64) (int64, bool) { return pts + step, true }, func(pts int64) {
		seq := pts / step
		if s.silent {
			return
		}
		if s.after != "" {
			s.w.mu.Lock()
			made := s.w.instances[s.after] > 0
			s.w.mu.Unlock()
			if !made {
				return
			}
			s.after = ""
		}
		if s.inst == 0 && int(seq) == s.failAt {
			ctx.Fail(errors.New("synthetic failure"))
			return
		}
		for i := range ctx.Outputs {
			f := s.pending[i]
			if f == nil {
				f = &tframe{src: ctx.ID(), inst: s.inst, seq: seq, pts: pts}
			}
			name := ctx.Outputs[i].Name()
			ok, err := ctx.Put(i, f)
			switch {
			case ok:
				s.pending[i] = nil
				s.w.add(s.w.produced, name)
			case errors.Is(err, ErrWouldBlock):
				if s.pending[i] == nil {
					s.w.add(s.w.blocked, name)
				}
				s.pending[i] = f
			case err == nil:
				s.w.add(s.w.dropped, name)
			default:
				ctx.Fail(err)
			}
		}
	})
	return err
}

func (s *testSource) Stop() {}

// testCompositor runs on its own thread: it sleeps to its next tick (or a
// poll interval), takes frames only from the inputs that signalled, and
// sends one frame per tick to its outputs.
type testCompositor struct {
	w       *world
	every   time.Duration // look at most this often (a slow bus)
	fired   atomic.Int64  // inputs that had signalled
	emitted int64
}

func (w *world) newCompositor(n plan.Node, ctx *NodeContext[*tframe]) (Node[*tframe], error) {
	ms := param(ctx.Plan.Params, "every_ms", 0)
	return &testCompositor{w: w, every: time.Duration(ms) * time.Millisecond}, nil
}

func (c *testCompositor) Start(ctx *NodeContext[*tframe]) error {
	period, err := ctx.FramePeriod()
	if err != nil {
		return err
	}
	set, err := ctx.ReadyInputs()
	if err != nil {
		return err
	}
	mw, err := NewMultiWait(ctx.Done(), set.Signal())
	if err != nil {
		return err
	}
	ctx.Go(func() error {
		defer mw.Close()
		next := Now() + period.ToNanos(1)
		var ready []int
		for !ctx.Stopping() {
			if _, err := mw.Wait(next); err != nil {
				return err
			}
			ctx.AdoptInputs() // inputs Extend added: Take reports them from now on
			ready = set.Take(ready[:0])
			for _, i := range ready {
				c.fired.Add(1)
				for {
					f, ok := ctx.Get(i)
					if !ok {
						break
					}
					c.w.add(c.w.consumed, ctx.Inputs[i].Name())
					c.w.mu.Lock()
					if k := ctx.ID(); len(c.w.firstSeen[k]) < 8 {
						c.w.firstSeen[k] = append(c.w.firstSeen[k], f)
					}
					c.w.mu.Unlock()
					if c.every > 0 {
						set.Mark(i) // a slow bus takes one frame per look; look again next time
						break
					}
				}
			}
			if now := Now(); now >= next {
				c.emitted++
				for o := range ctx.Outputs {
					if ok, _ := ctx.Put(o, &tframe{src: ctx.ID(), seq: c.emitted, pts: now}); ok {
						c.w.add(c.w.produced, ctx.Outputs[o].Name())
					} else {
						c.w.add(c.w.dropped, ctx.Outputs[o].Name())
					}
				}
				next += period.ToNanos(1)
				if next < now {
					next = now + period.ToNanos(1)
				}
			}
			if c.every > 0 {
				time.Sleep(c.every)
			}
		}
		return nil
	})
	return nil
}

func (c *testCompositor) Stop() {}

// testSink takes frames from its one input on its own thread, after an
// optional start delay.
type testSink struct {
	w     *world
	delay time.Duration
	panic bool // panic on the first frame (first instance only)
}

func (w *world) newSink(n plan.Node, ctx *NodeContext[*tframe]) (Node[*tframe], error) {
	if len(ctx.Inputs) != 1 {
		return nil, fmt.Errorf("sink %s: wants one input, has %d", n.ID, len(ctx.Inputs))
	}
	ms := param(ctx.Plan.Params, "start_delay_ms", 0)
	pan := param(ctx.Plan.Params, "panic", false)
	w.mu.Lock()
	inst := w.instances[n.ID]
	w.instances[n.ID]++
	w.mu.Unlock()
	return &testSink{w: w, delay: time.Duration(ms) * time.Millisecond, panic: pan && inst == 0}, nil
}

func (k *testSink) Start(ctx *NodeContext[*tframe]) error {
	ctx.Go(func() error {
		if k.delay > 0 && ctx.Done().Wait(ctx.Stopping, k.delay) {
			return nil
		}
		for !ctx.Stopping() {
			f, ok := ctx.Take(0, -1)
			if !ok {
				continue
			}
			k.w.add(k.w.consumed, ctx.Inputs[0].Name())
			if k.panic {
				panic("synthetic bug in a sink")
			}
			k.w.mu.Lock()
			if id := ctx.ID(); len(k.w.firstSeen[id]) < 8 {
				k.w.firstSeen[id] = append(k.w.firstSeen[id], f)
			}
			k.w.mu.Unlock()
		}
		return nil
	})
	return nil
}

func (k *testSink) Stop() {}

// showPlan is a hand-written plan: n sources on two pacing loops, each fanned
// out from its loop to the Program compositor (block, 3) and to a slow
// monitor bus (drop, 1); Program feeds a recorder sink.
func showPlan(n int, edit func(p *plan.Plan)) *plan.Plan {
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Show: "runtime-test", FrameRate: value.Rational{Num: 30, Den: 1}, Size: value.Size{W: 64, H: 36}, Format: value.NV12,
		Canvas: value.Settings{"pacing_loops": 2},
		Loops:  []plan.Loop{{Name: "default"}, {Name: "pacing_0"}, {Name: "pacing_1"}},
	}
	for i := 0; i < n; i++ {
		addr := fmt.Sprintf("source.s[%d]", i)
		id := addr + "/test_source"
		p.Nodes = append(p.Nodes, plan.Node{ID: id, Kind: "test_source", Address: addr, Group: addr,
			Placement: plan.Placement{Loop: fmt.Sprintf("pacing_%d", i%2)}, Params: map[string]any{}})
		p.Groups = append(p.Groups, plan.Group{Name: addr, Order: 0, Readiness: "every edge leaving the group has carried a frame", Restartable: true})
		p.Edges = append(p.Edges,
			plan.Edge{From: id, To: "bus.pgm/compositor", Capacity: 3, Policy: "block", Format: "nv12"},
			plan.Edge{From: id, To: "bus.mon/compositor", Capacity: 1, Policy: "drop", Format: "nv12"})
	}
	p.Nodes = append(p.Nodes,
		plan.Node{ID: "bus.pgm/compositor", Kind: "compositor", Address: "bus.pgm", Group: "bus.pgm", Placement: plan.Placement{Thread: true}},
		plan.Node{ID: "bus.mon/compositor", Kind: "compositor", Address: "bus.mon", Group: "bus.mon", Placement: plan.Placement{Thread: true}, Params: map[string]any{"every_ms": 100}},
		plan.Node{ID: "output.rec/sink", Kind: "sink", Address: "output.rec", Group: "output.rec", Placement: plan.Placement{Thread: true}})
	p.Groups = append(p.Groups,
		plan.Group{Name: "bus.pgm", Order: 1, Restartable: true},
		plan.Group{Name: "bus.mon", Order: 1, Restartable: true},
		plan.Group{Name: "output.rec", Order: 2})
	p.Edges = append(p.Edges, plan.Edge{From: "bus.pgm/compositor", To: "output.rec/sink", Capacity: 3, Policy: "block"})
	if edit != nil {
		edit(p)
	}
	return p
}

func nodeByID(p *plan.Plan, id string) *plan.Node {
	for i := range p.Nodes {
		if p.Nodes[i].ID == id {
			return &p.Nodes[i]
		}
	}
	return nil
}

// checkAccounting: on every edge, what producers handed over equals what
// consumers took plus what is still queued; drops only on drop edges, and
// the edge's own counters agree with the nodes'.
func checkAccounting(t *testing.T, w *world, st Status) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range st.Edges {
		prod, cons, drop := w.produced[e.Name], w.consumed[e.Name], w.dropped[e.Name]
		if uint64(prod) != e.EnqueuedTotal || uint64(cons) != e.DequeuedTotal || uint64(drop) != e.Drops {
			t.Errorf("edge %s: nodes counted produced %d, consumed %d, dropped %d; edge counted enqueued %d, dequeued %d, drops %d",
				e.Name, prod, cons, drop, e.EnqueuedTotal, e.DequeuedTotal, e.Drops)
		}
		if prod != cons+int64(e.Occupied) {
			t.Errorf("edge %s: produced %d != consumed %d + still queued %d", e.Name, prod, cons, e.Occupied)
		}
		if e.Policy == "block" && e.Drops != 0 {
			t.Errorf("edge %s: %d drops on a block edge", e.Name, e.Drops)
		}
		if prod == 0 {
			t.Errorf("edge %s carried nothing", e.Name)
		}
	}
}

func TestExecutorRunsAndAccountsForEveryFrame(t *testing.T) {
	leakCheck(t)
	w := newWorld()
	p := showPlan(8, nil)
	x, err := NewExecutor(p, w.lookup(), Options{ReadyTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// About 36 frames a source a second: run until the Program bus took 20
	// from each of the 8 and the slow monitor bus had to drop some.
	testwait.Until(t, testwait.Bound, "160 frames on the Program bus and drops on the monitor bus", func() bool {
		var pgm, monDrops uint64
		for _, e := range x.Status().Edges {
			switch e.To {
			case "bus.pgm/compositor":
				pgm += e.DequeuedTotal
			case "bus.mon/compositor":
				monDrops += e.Drops
			}
		}
		return pgm >= 8*20 && monDrops > 0
	})
	live := x.Status()
	if err := x.Stop(); err != nil {
		t.Fatal(err)
	}
	st := x.Status()
	checkAccounting(t, w, st)

	var monDrops uint64
	for _, e := range st.Edges {
		if e.To == "bus.mon/compositor" {
			monDrops += e.Drops
		}
	}
	if monDrops == 0 {
		t.Error("the slow monitor bus dropped nothing: the drop policy was not exercised")
	}
	if len(live.Loops) != 3 || live.Process.Threads == 0 || len(live.Threads) == 0 {
		t.Errorf("status: %d loops, %d threads, %d thread rows", len(live.Loops), live.Process.Threads, len(live.Threads))
	}
	for _, l := range live.Loops {
		if strings.HasPrefix(l.Name, "pacing_") && (l.TimersFired == 0 || l.Thread.Name == "") {
			t.Errorf("loop %s: %d timers fired, thread %q", l.Name, l.TimersFired, l.Thread.Name)
		}
	}
	for _, n := range live.Nodes {
		if n.State != "running" {
			t.Errorf("node %s is %s while the show runs", n.ID, n.State)
		}
		if n.Thread && (len(n.Threads) != 1 || n.Threads[0].Name != n.Kind) {
			t.Errorf("node %s: threads %+v, want one named %q", n.ID, n.Threads, n.Kind)
		}
	}
	for _, n := range st.Nodes {
		if n.State != "stopped" {
			t.Errorf("node %s is %s after Stop", n.ID, n.State)
		}
	}
	if _, err := json.Marshal(live); err != nil {
		t.Fatalf("status does not marshal: %v", err)
	}
	var pgm uint64
	for _, e := range st.Edges {
		if e.To == "bus.pgm/compositor" {
			pgm += e.DequeuedTotal
		}
	}
	if pgm < 8*20 {
		t.Errorf("the Program compositor took %d frames from 8 sources, want at least 160", pgm)
	}
}

// TestExecutorRestartKeepsBufferedFrames: a source fails at its fourth
// frame; its group restarts after the 1 s delay, and the frames it left on
// its edge (the recorder starts late) are still there for the recorder.
func TestExecutorRestartKeepsBufferedFrames(t *testing.T) {
	leakCheck(t)
	w := newWorld()
	p := &plan.Plan{Show: "restart", FrameRate: value.Rational{Num: 30, Den: 1}, Loops: []plan.Loop{{Name: "default"}, {Name: "pacing_0"}},
		Nodes: []plan.Node{
			{ID: "source.s/test_source", Kind: "test_source", Group: "source.s", Placement: plan.Placement{Loop: "pacing_0"}, Params: map[string]any{"fail_at": 3}},
			{ID: "output.rec/sink", Kind: "sink", Group: "output.rec", Placement: plan.Placement{Thread: true}, Params: map[string]any{"start_delay_ms": 1600}},
		},
		Edges:  []plan.Edge{{From: "source.s/test_source", To: "output.rec/sink", Capacity: 3, Policy: "block"}},
		Groups: []plan.Group{{Name: "source.s", Order: 0, Restartable: true}, {Name: "output.rec", Order: 1}},
	}
	x, err := NewExecutor(p, w.lookup(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := x.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer x.Stop()
	testwait.Until(t, testwait.Bound, "the source group to restart", func() bool { return x.Status().Groups[0].Restarts == 1 })
	if d := time.Since(start); d < time.Second {
		t.Fatalf("the group restarted %v after start, before the 1 s delay", d)
	}
	testwait.Until(t, testwait.Bound, "the recorder to take 6 frames", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.firstSeen["output.rec/sink"]) >= 6
	})
	testwait.Until(t, testwait.Bound, "the restarted group to be ready again (its edge carried a new frame)", func() bool { return x.Status().Groups[0].Ready })
	x.Stop()
	w.mu.Lock()
	got := w.firstSeen["output.rec/sink"]
	for i, f := range got[:3] {
		if f.inst != 0 || f.seq != int64(i) {
			t.Errorf("frame %d: instance %d seq %d; want the first instance's frame %d, kept across the restart", i, f.inst, f.seq, i)
		}
	}
	if got[3].inst != 1 {
		t.Errorf("frame 3 came from instance %d, want the restarted one", got[3].inst)
	}
	w.mu.Unlock()
	st := x.Status()
	if n := st.Nodes[0]; n.Restarts != 1 || !strings.Contains(n.LastError, "synthetic failure") {
		t.Errorf("source status: %+v", n)
	}
	checkAccounting(t, w, st)
}

// TestExecutorReadinessNamesTheSilentEdge: a group whose source never
// produces is not ready after the ready timeout, and the error names its
// edges. The silent source is the first group started, so that no other
// group has to become ready within the short timeout on a busy machine.
func TestExecutorReadinessNamesTheSilentEdge(t *testing.T) {
	leakCheck(t)
	w := newWorld()
	p := showPlan(2, func(p *plan.Plan) { nodeByID(p, "source.s[0]/test_source").Params["silent"] = true })
	x, err := NewExecutor(p, w.lookup(), Options{ReadyTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	err = x.Start(context.Background())
	if err == nil {
		x.Stop()
		t.Fatal("a group whose source never produces became ready")
	}
	for _, want := range []string{`group "source.s[0]"`, `"source.s[0]/test_source -> bus.pgm/compositor"`, `"source.s[0]/test_source -> bus.mon/compositor"`, "never carried a frame"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

// TestExecutorStartsSourcesTogether: sources do not wait for each other
// to become ready. Each source here gives its first frame only once the
// other has been made (as a live source gives its first picture only when
// its sender connects, or its loss timeout passes): started one after
// another, the first would wait for ever; started together, both are ready
// and the buses after them start once they are.
func TestExecutorStartsSourcesTogether(t *testing.T) {
	leakCheck(t)
	w := newWorld()
	p := showPlan(2, func(p *plan.Plan) {
		nodeByID(p, "source.s[0]/test_source").Params["after"] = "source.s[1]/test_source"
		nodeByID(p, "source.s[1]/test_source").Params["after"] = "source.s[0]/test_source"
	})
	x, err := NewExecutor(p, w.lookup(), Options{ReadyTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer x.Stop()
	for _, g := range x.Status().Groups {
		if !g.Ready {
			t.Errorf("group %s is not ready after Start", g.Name)
		}
	}
	var waves []string
	for _, wave := range x.waves() {
		var names []string
		for _, g := range wave {
			names = append(names, g.spec.Name)
		}
		waves = append(waves, strings.Join(names, " "))
	}
	// The buses take the sources' edges, the recorder the Program bus's.
	want := []string{"source.s[0] source.s[1]", "bus.mon bus.pgm", "output.rec"}
	if strings.Join(waves, " | ") != strings.Join(want, " | ") {
		t.Errorf("start waves %q, want %q", waves, want)
	}
}

// TestExecutorStartAtOnceBoundsAWave: with one group of a wave starting
// at a time, the two sources that wait for each other never both start,
// and the start fails naming the one that was started and the one that
// was not.
func TestExecutorStartAtOnceBoundsAWave(t *testing.T) {
	leakCheck(t)
	w := newWorld()
	p := showPlan(2, func(p *plan.Plan) {
		nodeByID(p, "source.s[0]/test_source").Params["after"] = "source.s[1]/test_source"
		nodeByID(p, "source.s[1]/test_source").Params["after"] = "source.s[0]/test_source"
	})
	x, err := NewExecutor(p, w.lookup(), Options{ReadyTimeout: 200 * time.Millisecond, StartAtOnce: 1})
	if err != nil {
		t.Fatal(err)
	}
	err = x.Start(context.Background())
	if err == nil {
		x.Stop()
		t.Fatal("two sources that wait for each other started one at a time")
	}
	for _, want := range []string{`group "source.s[0]"`, "1 not started yet"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %s", err, want)
		}
	}
}

func TestExecutorFailureEndsRun(t *testing.T) {
	leakCheck(t)
	w := newWorld()
	p := showPlan(2, func(p *plan.Plan) {
		nodeByID(p, "source.s[0]/test_source").Params["fail_at"] = 5
		p.Groups[0].Restartable = false
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := run(ctx, p, w.lookup(), Options{})
	if err == nil || !strings.Contains(err.Error(), `group "source.s[0]" failed`) || !strings.Contains(err.Error(), "synthetic failure") {
		t.Fatalf("run returned %v, want the source's failure", err)
	}
}

func TestNewExecutorReportsEveryProblem(t *testing.T) {
	w := newWorld()
	p := showPlan(1, func(p *plan.Plan) {
		p.Nodes = append(p.Nodes, plan.Node{ID: "x/warp", Kind: "warp_drive", Group: "nowhere", Placement: plan.Placement{Loop: "pacing_9"}})
		p.Edges = append(p.Edges, plan.Edge{From: "x/warp", To: "ghost", Capacity: 1}, plan.Edge{From: "source.s[0]/test_source", To: "output.rec/sink", Capacity: 0, Policy: "sometimes"})
		p.Groups[0].DependsOn = []string{"output.rec"}
	})
	_, err := NewExecutor(p, w.lookup(), Options{})
	if err == nil {
		t.Fatal("a broken plan was accepted")
	}
	for _, want := range []string{`kind "warp_drive" has no constructor`, `group "nowhere"`, `loop "pacing_9"`, `x/warp -> ghost`, `policy "sometimes"`, "capacity 0", `depends on "output.rec", which starts at order 2`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
}

// testRelay runs on a loop: it watches its input and forwards every frame to
// every output (a fan-out on the loop), never blocking the loop.
type testRelay struct {
	w       *world
	pending [][]*tframe
}

func (w *world) newRelay(n plan.Node, ctx *NodeContext[*tframe]) (Node[*tframe], error) {
	if len(ctx.Inputs) != 1 || ctx.Loop() == nil {
		return nil, fmt.Errorf("relay %s: wants one input and a loop", n.ID)
	}
	return &testRelay{w: w, pending: make([][]*tframe, len(ctx.Outputs))}, nil
}

func (r *testRelay) Start(ctx *NodeContext[*tframe]) error {
	flush := func() {
		for o := range ctx.Outputs {
			for len(r.pending[o]) > 0 {
				ok, err := ctx.Put(o, r.pending[o][0])
				if errors.Is(err, ErrWouldBlock) {
					break
				}
				name := ctx.Outputs[o].Name()
				if ok {
					r.w.add(r.w.produced, name)
				} else {
					r.w.add(r.w.dropped, name)
				}
				r.pending[o] = r.pending[o][1:]
			}
		}
	}
	for _, out := range ctx.Outputs {
		if _, err := ctx.Watch(out.Consumed(), func(reg *Registration) { flush(); reg.Rearm() }); err != nil {
			return err
		}
	}
	_, err := ctx.Watch(ctx.Inputs[0].Produced(), func(reg *Registration) {
		for f, ok := ctx.Get(0); ok; f, ok = ctx.Get(0) {
			r.w.add(r.w.consumed, ctx.Inputs[0].Name())
			for o := range ctx.Outputs {
				r.pending[o] = append(r.pending[o], f)
			}
		}
		flush()
		reg.Rearm()
	})
	return err
}

func (r *testRelay) Stop() {}

// TestExecutorLoopNodes: a source and a fan-out relay share a pacing loop;
// the relay watches its input on the loop and feeds two sinks, one slow
// behind a small block edge. Every frame is accounted for.
func TestExecutorLoopNodes(t *testing.T) {
	leakCheck(t)
	w := newWorld()
	p := &plan.Plan{Show: "loop-nodes", FrameRate: value.Rational{Num: 60, Den: 1}, Loops: []plan.Loop{{Name: "default"}, {Name: "pacing_0"}},
		Nodes: []plan.Node{
			{ID: "source.s/test_source", Kind: "test_source", Group: "source.s", Placement: plan.Placement{Loop: "pacing_0"}},
			{ID: "source.s/relay", Kind: "relay", Group: "source.s", Placement: plan.Placement{Loop: "pacing_0"}},
			{ID: "output.a/sink", Kind: "sink", Group: "outputs", Placement: plan.Placement{Thread: true}},
			{ID: "output.b/sink", Kind: "sink", Group: "outputs", Placement: plan.Placement{Thread: true}, Params: map[string]any{"start_delay_ms": 300}},
		},
		Edges: []plan.Edge{
			{From: "source.s/test_source", To: "source.s/relay", Capacity: 3, Policy: "block"},
			{From: "source.s/relay", To: "output.a/sink", Capacity: 3, Policy: "block"},
			{From: "source.s/relay", To: "output.b/sink", Capacity: 2, Policy: "block"},
		},
		Groups: []plan.Group{{Name: "source.s", Order: 0, Restartable: true}, {Name: "outputs", Order: 1}},
	}
	x, err := NewExecutor(p, w.lookup(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := x.Start(context.Background()); err == nil {
		t.Fatal("a second Start succeeded")
	}
	testwait.Until(t, testwait.Bound, "20 frames in the fast sink and 10 in the late one", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.consumed["source.s/relay -> output.a/sink"] >= 20 && w.consumed["source.s/relay -> output.b/sink"] >= 10
	})
	x.Stop()
	st := x.Status()
	checkAccounting(t, w, st)
	w.mu.Lock()
	defer w.mu.Unlock()
	if a := w.consumed["source.s/relay -> output.a/sink"]; a < 20 {
		t.Errorf("the fast sink took %d frames", a)
	}
	if b := w.consumed["source.s/relay -> output.b/sink"]; b < 10 {
		t.Errorf("the late sink took %d frames after its 0.3 s delay", b)
	}
}

// TestExecutorNodePanicRestartsGroup: a panic on a node's thread fails the
// node like an error; its restartable group comes back.
func TestExecutorNodePanicRestartsGroup(t *testing.T) {
	leakCheck(t)
	w := newWorld()
	p := showPlan(2, func(p *plan.Plan) {
		nodeByID(p, "output.rec/sink").Params = map[string]any{"panic": true}
		p.Groups[len(p.Groups)-1].Restartable = true
	})
	x, err := NewExecutor(p, w.lookup(), Options{RestartDelay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer x.Stop()
	testwait.Until(t, testwait.Bound, "the recorder group to restart", func() bool {
		for _, g := range x.Status().Groups {
			if g.Name == "output.rec" {
				return g.Restarts == 1 && g.State == "running"
			}
		}
		return false
	})
	for _, n := range x.Status().Nodes {
		if n.ID == "output.rec/sink" && !strings.Contains(n.LastError, "panic in the thread of node output.rec/sink: synthetic bug") {
			t.Errorf("sink status after the panic: %+v", n)
		}
	}
	x.Stop()
	checkAccounting(t, w, x.Status())
}

// bomb is a loop-placed node whose first timer panics.
type bomb struct{}

func (bomb) Start(ctx *NodeContext[*tframe]) error {
	_, err := ctx.AddTimer(Now()+int64(5*time.Millisecond), func() { panic("boom") })
	return err
}
func (bomb) Stop() {}

// TestLoopHandlerPanicFailsOnlyItsNode: a panic in a loop handler fails the
// node that registered it (its group restarts); the loop and the process go
// on.
func TestLoopHandlerPanicFailsOnlyItsNode(t *testing.T) {
	leakCheck(t)
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Show: "bomb", FrameRate: value.Rational{Num: 30, Den: 1},
		Nodes:  []plan.Node{{ID: "g/bomb", Kind: "bomb", Group: "g", Placement: plan.Placement{Loop: "default"}}},
		Loops:  []plan.Loop{{Name: "default"}},
		Groups: []plan.Group{{Name: "g", Restartable: true}},
	}
	lookup := func(kind string) (Constructor[*tframe], bool) {
		return func(plan.Node, *NodeContext[*tframe]) (Node[*tframe], error) { return bomb{}, nil }, kind == "bomb"
	}
	x, err := NewExecutor(p, lookup, Options{RestartDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer x.Stop()
	testwait.Until(t, testwait.Bound, "the group to restart twice after panics", func() bool {
		return x.Status().Groups[0].Restarts >= 2
	})
	if n := x.Status().Nodes[0]; !strings.Contains(n.LastError, "panic in a handler on loop default: boom") {
		t.Errorf("node status: %+v", n)
	}
}

// param reads a test node's param, or def when absent (test kinds are not
// in the registry, so nodes.Decode does not know them).
func param[T any](s value.Settings, key string, def T) T {
	if v, ok := s[key].(T); ok {
		return v
	}
	return def
}

// run executes p until ctx is done or a failure ends the run, then stops
// everything. It returns the start error, the failure, or nil.
func run[T any](ctx context.Context, p *plan.Plan, lookup Lookup[T], opts Options) error {
	x, err := NewExecutor(p, lookup, opts)
	if err != nil {
		return err
	}
	if err := x.Start(ctx); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-x.Failed():
	}
	return x.Stop()
}
