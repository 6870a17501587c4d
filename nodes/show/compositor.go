package show

import (
	"fmt"
	"slices"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/playout"
	"github.com/onairhq/onair/runtime"
)

// compositor draws one bus, on a thread of its own or (startOnLoop) as
// handlers on an event loop, as the plan places it. It sleeps to its next
// tick's deadline; in between it looks at its inputs at most every
// input_poll_ms (0: whenever one signals), and only at the inputs that
// signalled; a switch request makes it look at once. Each tick shows, for
// every layer, the newest frame of its source at or before the tick; the
// tick is committed once every output took it (or its deadline passed).
type compositor[F Frame] struct {
	b      *State
	bus    *BusState
	n      plan.Node
	format frame.Format
	w, h   int

	inputOf map[string]int // source address → input index
	inputs  []*playout.Input[F]
	cur     []F // the frame each input shows this tick; zero: none
	fresh   []bool
	scenes  [][]sceneLayer[F] // per scene index
	// sceneGen is the State's scene generation scenes were built from; a
	// tick that finds a newer one rebuilds them (State.ApplyLive).
	sceneGen uint64
	built    map[*plan.Scene][]sceneLayer[F] // the layers of each scene, as last built
	aux      []sceneLayer[F]                 // an AUX bus showing one source

	onLoop  bool  // placed on an event loop (handlers) rather than a thread
	primed  bool  // every input had a frame for a tick: the bus is on air
	bornNs  int64 // when the compositor started
	running bool  // a thread of its own draws, and releases what it holds when it ends

	canvas Canvas[F]
	layers []Layer[F]
	ready  []int
	toHost func(F) (*frame.Frame, func(), error) // for snapshots
	colour frame.Colour                          // the show's, stamped on every picture
	outs   []*OutputState                        // per output edge, for the hand-off's counts
	mix    *busMix                               // the bus's sound
	// pending is the tick drawn on a loop and not yet finished (startOnLoop).
	pending drawnTick[F]
	// The hand-off's functions, made with outs.
	stopping    func() bool
	waitForRoom func(e *runtime.Edge[F], d int64, stopping func() bool)
}

// sceneLayers builds the layers of each scene the bus may show from the
// scenes as the show holds them now (State.scene). A scene the show still
// holds as it did at the last build (the same *plan.Scene: ApplyLive swaps
// scenes, never changes one) keeps the layers built for it then, so a
// rebuild costs a lookup per unchanged scene.
func (c *compositor[F]) sceneLayers() ([][]sceneLayer[F], error) {
	c.b.scenesMu.RLock() // ApplyLive changes the scenes and the lists under it
	defer c.b.scenesMu.RUnlock()
	list := c.bus.Scenes()
	scenes := make([][]sceneLayer[F], 0, len(list))
	built := make(map[*plan.Scene][]sceneLayer[F], len(list))
	for _, addr := range list {
		sc := c.b.scenes[addr]
		if sc == nil {
			return nil, fmt.Errorf("node %s: the show holds no scene %s", c.n.ID, addr)
		}
		if ls, ok := c.built[sc]; ok {
			scenes = append(scenes, ls)
			built[sc] = ls
			continue
		}
		var ls []sceneLayer[F]
		for _, l := range sc.Layers {
			in, ok := c.inputOf[l.Source]
			if !ok {
				return nil, fmt.Errorf("node %s: %s shows %s, but the plan gives the bus no edge from it", c.n.ID, addr, l.Source)
			}
			fit, err := frame.ParseFit(l.Fit)
			if err != nil {
				return nil, fmt.Errorf("node %s: %s: %v", c.n.ID, addr, err)
			}
			cl := Layer[F]{Rect: frame.Rect{X: l.Rect[0], Y: l.Rect[1], W: l.Rect[2], H: l.Rect[3]}, Fit: fit, Opacity: l.Opacity, Z: l.Z}
			if l.Crop != nil {
				cl.Crop = frame.Rect{X: l.Crop[0], Y: l.Crop[1], W: l.Crop[2], H: l.Crop[3]}
			}
			ls = append(ls, sceneLayer[F]{input: in, layer: cl})
		}
		scenes = append(scenes, ls)
		built[sc] = ls
	}
	c.built = built
	return scenes, nil
}

// compositorParams are the compositor's params, as nodes/ declares them.
type compositorParams struct {
	Bus         string       `param:"bus"`
	InputPollMs int          `param:"input_poll_ms"`
	Scenes      []string     `param:"scenes"`
	Scene       string       `param:"scene"`
	Colour      frame.Colour `param:"colour"`
	// TimecodeStart is canvas timecode_start; State reads it (timecode.go).
	TimecodeStart string `param:"timecode_start"`
}

type sceneLayer[F Frame] struct {
	input int
	layer Layer[F] // Frame filled in per tick
}

func newCompositor[F Frame](b *State, be *Backend[F], n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	f, w, h, _, err := b.Video(&n)
	if err != nil {
		return nil, err
	}
	prm, err := Params[compositorParams](&n)
	if err != nil {
		return nil, err
	}
	var canvas Canvas[F]
	if be.NewCanvasOn != nil {
		canvas, err = be.NewCanvasOn(n, f, w, h)
	} else {
		canvas, err = be.NewCanvas(f, w, h)
	}
	if err != nil {
		return nil, fmt.Errorf("node %s: %v", n.ID, err)
	}
	c := &compositor[F]{
		b: b, bus: b.buses[n.Address], n: n, format: f, w: w, h: h,
		inputOf: map[string]int{}, canvas: canvas, toHost: be.ToHost, colour: prm.Colour.Or(frame.BT709),
	}
	if err := c.addInputs(ctx.Inputs); err != nil {
		return nil, err
	}
	names := make([]string, len(c.inputs))
	for a, i := range c.inputOf {
		names[i] = a
	}
	if c.mix, err = newBusMix(c.bus.Audio, names, int64(b.rate.Num), int64(b.rate.Den)); err != nil {
		return nil, fmt.Errorf("node %s: %v", n.ID, err)
	}
	if c.scenes, err = c.sceneLayers(); err != nil {
		return nil, err
	}
	c.sceneGen = b.sceneGen.Load()
	if len(c.scenes) == 0 {
		// An AUX bus with one source: the source over the whole canvas.
		if len(c.inputs) != 1 {
			return nil, fmt.Errorf("node %s: an AUX bus without a scene shows one source; the plan gives it %d inputs", n.ID, len(c.inputs))
		}
		c.aux = []sceneLayer[F]{{input: 0, layer: Layer[F]{Rect: frame.Rect{W: w, H: h}, Fit: frame.Contain, Opacity: 1}}}
	}
	return c, nil
}

// addInputs takes the edges after the inputs c has (all of them at its
// construction; those a source added on air brings, later) as inputs.
func (c *compositor[F]) addInputs(edges []*runtime.Edge[F]) error {
	nodes := c.b.nodeMap()
	for _, e := range edges[len(c.inputs):] {
		from, ok := nodes[e.Config().From]
		if !ok {
			return fmt.Errorf("node %s: input %d comes from %s, which is not in the plan", c.n.ID, len(c.inputs), e.Config().From)
		}
		c.inputOf[from.Address] = len(c.inputs)
		c.b.snaps.claim(from.Address, c.bus.Address)
		c.inputs = append(c.inputs, playout.NewInput(func(f F) { f.Release() }))
		c.cur = append(c.cur, zero[F]())
		c.fresh = append(c.fresh, false)
		if c.mix != nil {
			c.mix.add(from.Address)
		}
	}
	return nil
}

func (c *compositor[F]) Start(ctx *runtime.NodeContext[F]) error {
	c.bornNs = c.b.opts.Clock()
	set, err := ctx.ReadyInputs()
	if err != nil {
		return err
	}
	if ctx.Loop() != nil {
		return c.startOnLoop(ctx, set)
	}
	// Two waits: one that also watches the inputs, one (between looks, when
	// input_poll_ms is set) that watches only the stop and switch signals.
	all, err := runtime.NewMultiWait(ctx.Done(), c.bus.wake, set.Signal())
	if err != nil {
		return err
	}
	quiet, err := runtime.NewMultiWait(ctx.Done(), c.bus.wake)
	if err != nil {
		all.Close()
		return err
	}
	c.running = true
	ctx.Go(func() error {
		defer all.Close()
		defer quiet.Close()
		defer c.release() // on this thread: Stop runs before it returns
		return c.run(ctx, set, all, quiet)
	})
	return nil
}

func (c *compositor[F]) run(ctx *runtime.NodeContext[F], set *runtime.ReadySet, all, quiet *runtime.MultiWait) error {
	clock := c.b.opts.Clock
	grid := c.b.grid()
	sched := playout.NewSchedule(grid, 2, clock())
	var lastLook int64
	for !ctx.Stopping() {
		deadline := sched.NextDeadline()
		now := clock()
		wait, until := all, deadline
		poll := c.bus.pollNs.Load() // input_poll_ms, which onair apply may change
		if poll > 0 && now < lastLook+poll {
			wait, until = quiet, min(deadline, lastLook+poll)
		}
		if now < until {
			fired, err := wait.Wait(until)
			if err != nil {
				return err
			}
			for _, i := range fired {
				if i == 1 { // a switch: look at every input at once
					lastLook = 0
				}
			}
		}
		now = clock()
		if poll == 0 || now >= lastLook+poll {
			c.look(ctx, set)
			lastLook = now
		}
		k, due := sched.Due(now)
		if !due {
			continue
		}
		c.look(ctx, set) // the freshest frames for the draw
		lastLook = now
		if err := c.tick(ctx, sched, grid, k, now); err != nil {
			return err
		}
	}
	return nil
}

// startOnLoop runs the compositor as handlers on its event loop (the plan
// puts AUX buses on the default loop): a timer at each tick's deadline, a
// watch on the inputs that is held back to one look per input_poll_ms by a
// second timer, and a watch on switch requests. Nothing here waits: an
// output that cannot take a tick drops it at once.
func (c *compositor[F]) startOnLoop(ctx *runtime.NodeContext[F], set *runtime.ReadySet) error {
	clock := c.b.opts.Clock
	grid := c.b.grid()
	sched := playout.NewSchedule(grid, 2, clock())
	c.onLoop = true
	var lastLook int64
	var pollArmed bool
	var pollTimer, tickTimer *runtime.Timer
	look := func() {
		c.look(ctx, set)
		lastLook = clock()
	}
	var err error
	pollTimer, err = ctx.AddTimer(0, func() {
		pollArmed = false
		look()
	})
	if err != nil {
		return err
	}
	pollTimer.Stop()
	// On a canvas that queues its work (the GPU's) a tick is drawn in two
	// handlers: at its deadline the picture is queued (draw), and the wait
	// for it and the hand-off (finish) come in a handler of their own, due
	// just after. The loop runs every handler due at the deadline first,
	// so the AUX buses on one loop queue their pictures one after another
	// and then wait for them, rather than each waiting for its own picture
	// (a stream synchronized and the thread woken) before the next bus can
	// queue: the last bus's tick no longer takes the sum of every bus's
	// wait. A canvas that draws in place (the CPU's) has no wait to gather:
	// splitting would only make each bus's hand-off wait for every other
	// bus's drawing, so its ticks are drawn whole (tick).
	//
	// A canvas that can say without waiting whether its picture is drawn
	// (PollsDrawn: the GPU's) is not waited for at all: the finish handler
	// finds the picture drawn and hands it off, or looks again drawnPollNs
	// later, so each bus commits as its own picture is done, and one late
	// picture holds no other bus's tick and no other handler of the loop.
	_, inPlace := c.canvas.(DrawsInPlace)
	polls, _ := c.canvas.(PollsDrawn[F])
	var finishTimer *runtime.Timer
	finishTimer, err = ctx.AddTimer(0, func() {
		if !c.pending.ok {
			return
		}
		if polls != nil && !c.pending.done {
			done, err := polls.Drawn(c.pending.out)
			if err != nil {
				ctx.Fail(fmt.Errorf("%s tick %d: %w", c.bus.Address, c.pending.k, err))
				return
			}
			if !done {
				finishTimer.Reset(runtime.Now() + drawnPollNs)
				return
			}
			c.pending.done = true
		}
		d := c.pending
		c.pending = drawnTick[F]{}
		if err := c.finish(ctx, sched, &d); err != nil {
			ctx.Fail(err)
			return
		}
		tickTimer.Reset(sched.NextDeadline())
	})
	if err != nil {
		return err
	}
	finishTimer.Stop()
	tickTimer, err = ctx.AddTimer(sched.NextDeadline(), func() {
		if ctx.Stopping() {
			return
		}
		now := clock()
		if k, due := sched.Due(now); due && inPlace {
			look()
			if err := c.tick(ctx, sched, grid, k, now); err != nil {
				ctx.Fail(err)
				return
			}
		} else if due {
			look()
			d, err := c.draw(ctx, sched, grid, k, now)
			if err != nil {
				ctx.Fail(err)
				return
			}
			if d.ok {
				c.pending = d
				finishTimer.Reset(max(runtime.Now(), sched.Deadline(k)+1)) // after every handler due at the deadline
				return
			}
		}
		tickTimer.Reset(sched.NextDeadline())
	})
	if err != nil {
		return err
	}
	if _, err := ctx.Watch(set.Signal(), func(r *runtime.Registration) {
		if now, poll := clock(), c.bus.pollNs.Load(); poll > 0 && now < lastLook+poll {
			if !pollArmed {
				pollArmed = true
				pollTimer.Reset(lastLook + poll)
			}
		} else {
			look()
		}
		r.Rearm()
	}); err != nil {
		return err
	}
	if _, err := ctx.Watch(c.bus.wake, func(r *runtime.Registration) {
		look() // a switch: look at once
		r.Rearm()
	}); err != nil {
		return err
	}
	return nil
}

// look takes the frames of the inputs that signalled, and first the
// inputs a source added on air brings (State.addSources): their scenes
// join the bus only once it has them.
func (c *compositor[F]) look(ctx *runtime.NodeContext[F], set *runtime.ReadySet) {
	if ctx.AdoptInputs() > 0 {
		if err := c.addInputs(ctx.Inputs); err != nil {
			ctx.Fail(err) // its group restarts, with every input
			return
		}
	}
	c.ready = set.Take(c.ready[:0])
	for _, i := range c.ready {
		for {
			f, ok := ctx.Get(i)
			if !ok {
				break
			}
			c.inputs[i].Offer(f, f.Metadata().PTS)
		}
	}
}

// tick draws tick k and hands it to the outputs.
func (c *compositor[F]) tick(ctx *runtime.NodeContext[F], sched *playout.Schedule, grid playout.Grid, k, start int64) error {
	d, err := c.draw(ctx, sched, grid, k, start)
	if err != nil || !d.ok {
		return err
	}
	return c.finish(ctx, sched, &d)
}

// drawnTick is a tick whose picture is queued (draw) and not yet waited
// for and handed to the outputs (finish).
type drawnTick[F Frame] struct {
	ok               bool // false: nothing to finish (the bus is not primed yet)
	done             bool // its picture was found drawn (PollsDrawn): finish does not wait
	out              F
	k, start, drawn  int64
	from, to         int
	progress         float64
	skipped, repeats uint64
}

// draw queues tick k's picture: the frames picked, the switch landed, the
// composite drawn (on the GPU, queued on the canvas's stream).
func (c *compositor[F]) draw(ctx *runtime.NodeContext[F], sched *playout.Schedule, grid playout.Grid, k, start int64) (drawnTick[F], error) {
	// Release times count in the pacers' time base (1/120000 s) and are
	// rounded up to the nanosecond, the tick grid rounds down: a frame
	// released within one unit of the time base after the tick is on it.
	t := grid.At(k) + timeBaseSlackNs
	if g := c.b.sceneGen.Load(); g != c.sceneGen {
		// Scenes changed while the show runs: this tick draws them. The
		// change was checked against the bus's inputs before it was
		// made, so an error here keeps the scenes the bus had.
		if scenes, err := c.sceneLayers(); err != nil {
			ctx.Log.Error("scenes changed, but the bus keeps drawing its old ones", "error", err)
		} else {
			c.scenes = scenes
		}
		c.sceneGen = g
	}
	// A bus goes on air with every input it has: until each has a frame for
	// the tick (or half a second has passed since the bus started), ticks
	// are passed over, neither drawn nor counted.
	if !c.primed {
		c.primed = start-c.bornNs > 500_000_000
		for _, in := range c.inputs {
			if !in.Ready(t) && !c.primed {
				sched.Commit(k)
				return drawnTick[F]{}, nil
			}
		}
		c.primed = true
	}
	var skipped uint64
	for i, in := range c.inputs {
		before := in.Stats.Skipped
		f, ok, fresh := in.Pick(t)
		if !ok {
			f = zero[F]()
		}
		c.cur[i], c.fresh[i] = f, fresh
		skipped += in.Stats.Skipped - before
	}
	if c.bus.first < 0 {
		skipped = 0 // frames from before the bus went on air were never due on it
	}
	c.bus.mu.Lock()
	from, to, kind, progress := c.bus.switcher.At(k)
	if c.bus.drawn < c.bus.switches {
		c.bus.landSwitches(k, sched.Deadline(k)-c.b.origin)
	}
	c.bus.mu.Unlock()

	out, err := c.canvas.Get()
	if err != nil {
		return drawnTick[F]{}, err
	}
	var repeats uint64
	if progress == 0 || to == from {
		repeats, err = c.render(out, from)
	} else {
		repeats, err = c.transition(out, from, to, kind, progress)
	}
	if err != nil {
		out.Release()
		return drawnTick[F]{}, fmt.Errorf("%s tick %d: %w", c.bus.Address, k, err)
	}
	m := out.Metadata()
	m.PTS, m.TimeBase, m.SourceFrame, m.Source, m.Colour = k, c.b.rate.Inverse(), k, c.bus.Address, c.colour
	m.Timecode = c.b.TimecodeAt(k)
	setAudio(out, c.mixTick(ctx, k, from, to, progress))
	return drawnTick[F]{ok: true, out: out, k: k, start: start, drawn: clock(c.b), from: from, to: to, progress: progress, skipped: skipped, repeats: repeats}, nil
}

// finish waits for a drawn tick's picture and hands it to the outputs, and
// counts the tick.
func (c *compositor[F]) finish(ctx *runtime.NodeContext[F], sched *playout.Schedule, d *drawnTick[F]) error {
	out, k, start, drawn := d.out, d.k, d.start, d.drawn
	from, to, progress, skipped, repeats := d.from, d.to, d.progress, d.skipped, d.repeats
	if !d.done { // done: PollsDrawn found it drawn, nothing to wait for
		if err := c.canvas.Wait(out); err != nil {
			out.Release()
			return fmt.Errorf("%s tick %d: %w", c.bus.Address, k, err)
		}
	}
	waited := clock(c.b)

	// Hand off: the tick is committed once every output took the frame. An
	// output whose edge is full gets until half a period after the tick's
	// deadline (Schedule.HandOffLimit); then the frame is dropped for that
	// output alone, and counted, so no output holds the bus longer.
	if ctx.Stopping() { // the outputs may be gone: this tick is not shown
		out.Release()
		sched.Commit(k)
		return nil
	}
	limit := sched.HandOffLimit(k)
	if c.onLoop {
		limit = 0 // a loop never waits
	}
	drops := c.handOff(ctx, out, limit)
	c.snapshot(out, start)
	out.Release()
	sched.Commit(k)
	end := clock(c.b)

	c.bus.mu.Lock()
	c.bus.ticks++
	if c.bus.first < 0 {
		c.bus.first = k
	}
	c.bus.skipped += skipped
	c.bus.missed = sched.Missed
	c.bus.repeats += repeats
	c.bus.outDrops += drops
	c.bus.onAirAt = k
	p := c.bus.period
	deadline := sched.Deadline(k)
	c.bus.timing.Draw.Observe(end-deadline, p)
	c.bus.timing.Wake.Observe(start-deadline, p)
	c.bus.timing.Queue.Observe(drawn-start, p)
	c.bus.timing.GPUWait.Observe(waited-drawn, p)
	c.bus.timing.HandOff.Observe(end-waited, p)
	missed := c.bus.missed
	c.bus.mu.Unlock()
	c.b.metrics.observe(c.bus.Address, deadline, start, drawn, waited, end)
	if progress == 0 {
		to = from
	}
	c.b.op.ticked(c.bus, k, deadline, from, to, missed)
	return nil
}

func clock(b *State) int64 { return b.opts.Clock() }

// mixTick mixes tick k's sound: the blocks of the frames the tick shows
// for the first time go into the mixer, each follow-video source is heard
// as much as the picture shows it (during a transition, the transition's
// own progress from the scene on air to the next), and the bus's meter
// reads the mix. The block returned is the mixer's, good until its next
// Mix: setAudio copies it into the frame.
func (c *compositor[F]) mixTick(ctx *runtime.NodeContext[F], k int64, from, to int, progress float64) []float32 {
	mx := c.mix
	if err := mx.apply(); err != nil {
		ctx.Log.Error("the bus's mix changed, but the bus keeps its old one", "error", err)
		mx.gen = mx.a.generation()
	}
	for i, f := range c.cur {
		if c.fresh[i] && f != zero[F]() {
			if a := f.Metadata().Audio; a != nil {
				mx.mixer.Push(i, a)
			}
		}
	}
	clear(mx.weights)
	if progress == 0 || to == from {
		c.visible(from, 1)
	} else {
		c.visible(from, 1-progress)
		c.visible(to, progress)
	}
	block := mx.mixer.Mix(mx.cadence.Samples(k), mx.weights)
	mx.clipped(c.b, c.bus, k, mx.a.Meter.Add(block))
	return block
}

// setAudio gives out the tick's sound: into the frame's own storage where
// its type keeps one (host and device frames: no allocation per tick), or
// a copy of its own.
func setAudio[F Frame](out F, block []float32) {
	if o, ok := any(out).(interface{ SetAudio([]float32) }); ok {
		o.SetAudio(block)
		return
	}
	out.Metadata().Audio = slices.Clone(block)
}

// visible adds w to the follow-video weight of each source scene s shows.
func (c *compositor[F]) visible(s int, w float64) {
	ls := c.aux
	if s >= 0 && s < len(c.scenes) {
		ls = c.scenes[s]
	}
	seen := c.mix.seen
	clear(seen)
	for _, l := range ls {
		if l.layer.Opacity > 0 && !seen[l.input] {
			seen[l.input] = true
			c.mix.weights[l.input] += w
		}
	}
}

// drawnPollNs is how often a compositor on a loop looks again at a
// picture its canvas has not drawn yet (PollsDrawn): 1/133 of a 30 fps
// period, so a tick commits within a quarter of a millisecond of its
// picture, and a picture late by a whole period costs the loop about 130
// queries of a stream.
const drawnPollNs = 250_000

// timeBaseSlackNs is one unit of the pacers' 1/120000 s time base, rounded
// up: the precision to which a release time and a tick are compared.
const timeBaseSlackNs = (1_000_000_000 + 119_999) / 120_000

// handOff puts out on every output edge (handOffTo), waiting for room on
// the show's clock until limit; it returns how many outputs did not take
// it.
func (c *compositor[F]) handOff(ctx *runtime.NodeContext[F], out F, limit int64) uint64 {
	if c.outs == nil {
		c.outs = make([]*OutputState, len(ctx.Outputs))
		for i, e := range ctx.Outputs {
			if n := c.b.nodeMap()[e.Config().To]; n != nil {
				c.outs[i] = c.b.outputs[n.Address]
			}
		}
		// Made once: a method value or an instantiated func made per
		// tick is an allocation per tick.
		c.stopping, c.waitForRoom = ctx.Stopping, waitForRoom[F]
	}
	drops := handOffTo(ctx.Outputs, c.outs, out, limit, c.b.opts.Clock, c.waitForRoom, c.stopping)
	ctx.Stats.Out.Add(uint64(len(ctx.Outputs)) - drops)
	ctx.Stats.Drops.Add(drops)
	return drops
}

// waitForRoom waits up to d for e to have room (or the show to stop); an
// output takes from its edge on its own thread or loop.
func waitForRoom[F Frame](e *runtime.Edge[F], d int64, stopping func() bool) {
	e.Consumed().Wait(func() bool { return e.Len() < e.Config().Capacity || stopping() }, time.Duration(d))
}

// handOffTo puts out on every edge of outs, retained once for each that
// takes it. An output that has not taken a frame yet is still starting:
// its edge keeps the newest frames (runtime.Edge.PutNewest) and is never
// waited for. An edge that is full is waited on (wait, for at most what is
// left until limit on clock) and tried again; one still full at limit, or
// closed, or met while stopping, does not get this frame: a drop for that
// output alone. Each output's waits, drops and longest wait are counted in
// its OutputState (states[i], nil: not counted). The wait is bounded by
// limit whatever the outputs do, and never starts past it. It returns the
// drops.
func handOffTo[F Frame](outs []*runtime.Edge[F], states []*OutputState, out F, limit int64, clock func() int64,
	wait func(e *runtime.Edge[F], d int64, stopping func() bool), stopping func() bool) uint64 {
	var drops uint64
	for i, e := range outs {
		var st *OutputState
		if i < len(states) {
			st = states[i]
		}
		if !e.Taken() && !stopping() {
			// The output's group is still starting: it gets the newest
			// ticks, so that what it writes runs on from its first frame,
			// and the bus never waits for it (a start drop, not a drop).
			out.Retain()
			old, replaced, err := e.PutNewest(out)
			switch {
			case err != nil:
				out.Release()
				drops++
			case replaced:
				old.Release()
			}
			continue
		}
		var waitedSince int64 = -1
		for {
			out.Retain()
			ok, err := e.TryPut(out)
			if ok {
				break
			}
			out.Release()
			now := clock()
			if waitedSince < 0 && err == nil && st != nil {
				st.HandOffWaits.Add(1)
			}
			if waitedSince < 0 {
				waitedSince = now
			}
			left := limit - now
			if err != nil || left <= 0 || stopping() {
				drops++
				if st != nil {
					st.HandOffDrops.Add(1)
				}
				break
			}
			wait(e, left, stopping)
		}
		if waitedSince >= 0 && st != nil {
			w := clock() - waitedSince
			st.HandOffWaitNs.Add(w)
			for {
				m := st.HandOffMaxNs.Load()
				if w <= m || st.HandOffMaxNs.CompareAndSwap(m, w) {
					break
				}
			}
		}
	}
	return drops
}

// layersOf fills c.layers with scene s's layers and counts the visible
// layers whose frame is a repeat.
func (c *compositor[F]) layersOf(s int) uint64 {
	ls := c.aux
	if s >= 0 && s < len(c.scenes) {
		ls = c.scenes[s]
	}
	c.layers = c.layers[:0]
	var repeats uint64
	for _, l := range ls {
		cl := l.layer
		cl.Frame = c.cur[l.input]
		if cl.Frame != zero[F]() && !c.fresh[l.input] && cl.Opacity > 0 {
			repeats++
		}
		c.layers = append(c.layers, cl)
	}
	return repeats
}

func (c *compositor[F]) render(dst F, s int) (uint64, error) {
	r := c.layersOf(s)
	return r, c.canvas.Draw(dst, c.layers)
}

func (c *compositor[F]) transition(dst F, from, to int, kind playout.Kind, progress float64) (uint64, error) {
	a, err := c.canvas.Get()
	if err != nil {
		return 0, err
	}
	defer a.Release()
	bb, err := c.canvas.Get()
	if err != nil {
		return 0, err
	}
	defer bb.Release()
	r1, err := c.render(a, from)
	if err != nil {
		return 0, err
	}
	r2, err := c.render(bb, to)
	if err != nil {
		return 0, err
	}
	return r1 + r2, c.canvas.Transition(dst, a, bb, kind, progress)
}

func (c *compositor[F]) Stop() {
	if !c.running { // on a loop (its thread, after its last handler), or never started
		c.release()
	}
}

// release lets go of every frame the inputs hold, and stops the drawing
// goroutines.
func (c *compositor[F]) release() {
	if c.pending.ok { // drawn on a loop that stopped before it was finished
		c.pending.out.Release()
		c.pending = drawnTick[F]{}
	}
	c.canvas.Close()
	for _, in := range c.inputs {
		in.Close()
	}
}

// zero is the zero frame: no picture.
func zero[F Frame]() F {
	var z F
	return z
}
