// Package show is the show runtime every backend shares: what a bus shows
// and switches to (the latest 32 switches kept, all of them counted), the
// compositor's schedule (sleep to the deadline, look at the inputs that
// signalled at most every input_poll_ms, draw through playout, commit once
// the outputs took the tick), the realtime pacer, the fan-outs, the outputs
// and what they count, the summary, /status and /metrics.
//
// A show locks the files its outputs write before anything opens a file,
// so a second show on the same recording is refused (LockOutputs). A record
// output never destroys what it wrote: on a write error it drops frames,
// backs off and continues its file after the last whole frame (recorder).
//
// It is generic over the backend's frame type; a backend supplies
// the pixel work behind small interfaces (Backend, Canvas) and the
// constructors of its own kinds (sources, uploads, decoders).
//
// State that must outlive a node's restart — what a bus shows, what each
// source and output has counted, the last error — lives in State, not in
// the node, so a group restart loses no count and no cut.
//
// show must never import lang/ or compiler/ (it runs a saved plan as well
// as a fresh one) nor any backend; it imports runtime/, playout/, frame/,
// nodes/ (the registry), nodes/media and nodes/media/ipc (the host-side
// outputs, the local socket's checks), internal/value, metrics/,
// events/, showerr/ and plan/.
package show

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/playout"
	"github.com/onairhq/onair/runtime"
	"github.com/onairhq/onair/showerr"
	"github.com/onairhq/onair/timecode"
)

// Options tune a run.
type Options struct {
	// FFmpeg is the ffmpeg binary for ffmpeg outputs; "" is ffmpeg on $PATH.
	FFmpeg string
	// Clock reads monotonic nanoseconds; nil is runtime.Now. The bus grids
	// start at the first reading.
	Clock func() int64
	// BaseDir is the show's directory: relative paths in the plan (media,
	// recordings) are relative to it. "" is the working directory.
	BaseDir string
	// OpenFile opens the files record outputs write; nil is os.OpenFile. A
	// test stands in a disk that fills up (media.SmallDisk).
	OpenFile media.OpenFunc
	// AsRun is the as-run log's path (asrun.go), as given (not relative
	// to BaseDir); "" keeps none. A path that cannot be written refuses
	// the show before anything starts. It is opened through OpenFile.
	AsRun string
	// AsRunFsync is when the as-run log is fsynced (AsRunFsyncs): "" and
	// "second", once a second while lines come; "line", after every line.
	AsRunFsync string
	// Log takes the as-run lines at info level; nil: none.
	Log *slog.Logger
}

// State is one run of a plan: its buses, sources and outputs, kept across
// node restarts.
type State struct {
	plan       *plan.Plan
	opts       Options
	origin     int64 // tick 0 of every bus grid
	originOnce sync.Once
	rate       frame.Rational
	onAir      atomic.Int64 // when Start returned (OnAir); 0 before
	// marks are the counts when the show went on air (onair.go); nil
	// before.
	marks atomic.Pointer[onAirMarks]

	// topo holds the nodes, sources and feeds, swapped whole when a
	// source is added on air (addSources): read it through nodeMap,
	// sourceMap, StampID and feeds.
	topo atomic.Pointer[topology]
	// scenes are the show's scenes, by address. ApplyLive swaps an
	// entry for a new one under scenesMu (never changing one in place), and
	// bumps sceneGen after: a compositor that sees a newer generation
	// rebuilds its layers.
	scenesMu sync.RWMutex
	scenes   map[string]*plan.Scene
	sceneGen atomic.Uint64
	buses    map[string]*BusState
	outputs  map[string]*OutputState
	adding   starting // sources being added on air (liveadd.go)

	op      *operator  // preview, tally, events (operator.go)
	snaps   *snapshots // the multiviewer's tiles (snapshot.go)
	metrics *timings   // histograms (metrics.go)
	tc      *showClock // the show's timecode (timecode.go)
	asRun   *AsRun     // the as-run log; nil: none (asrun.go)
	tally   *tallyOut  // TSL 5.0 out; nil: none (tally.go)
}

// SourceState is what a source has done, kept across restarts.
type SourceState struct {
	Address  string
	Produced atomic.Uint64 // frames made by the source node
	Paced    atomic.Uint64 // frames released on time by the pacer
	Underrun atomic.Uint64 // releases that found no frame waiting, once the first was released
	Drops    atomic.Uint64 // frames dropped on their way to a bus
	// StartDrops are frames an edge toward a bus refused before that bus's
	// compositor took its first: its group was still starting (groups
	// start one after another, each once it delivers), so the frames were
	// never due on air. Not drops.
	StartDrops atomic.Uint64

	browser atomic.Pointer[BrowserState] // a browser source's counters (Browser)
	live    atomic.Pointer[LiveState]    // a live source's counters (Live)

	// Audio meters the source's sound, as its node makes it.
	Audio Meter
	// SoundLate counts the pictures that went on air with silence because
	// their file's sound was not decoded yet (media.FileSound.Frame): the
	// pictures never wait for it.
	SoundLate atomic.Uint64

	mu      sync.Mutex
	lastErr string
	errors  uint64
	op      *operator // told when the error changes
	// The stamps of the last frame released on time that carried any
	// (frame_metadata), and when it was released (Unix ns).
	stamps   frame.Stamps
	released int64
}

// NoteStamps records the stamps of a frame the pacer released at ns (Unix
// time): /status shows how long before its release each stamped moment was.
func (s *SourceState) NoteStamps(st *frame.Stamps, ns int64) {
	s.mu.Lock()
	s.stamps, s.released = *st, ns
	s.mu.Unlock()
}

// stampAges is how long before its release each stamped moment of the last
// stamped frame was, in ms (nil when none was); s.mu is held.
func (s *SourceState) stampAges() map[string]float64 {
	if s.stamps.Set == 0 {
		return nil
	}
	out := map[string]float64{}
	s.stamps.Each(func(k frame.StampKey, ns int64) { out[k.String()] = float64(s.released-ns) / 1e6 })
	return out
}

// Fail records err as the source's last error and counts it; it reports
// whether the error differs from the one before (so a node logs it once).
func (s *SourceState) Fail(err error) (changed bool) {
	s.mu.Lock()
	changed = s.lastErr != err.Error()
	s.lastErr = err.Error()
	s.errors++
	s.mu.Unlock()
	if changed && s.op != nil {
		s.op.sourceFailed(s.Address, err.Error())
	}
	return changed
}

// ClearErr records that the source delivers its media again.
func (s *SourceState) ClearErr() {
	s.mu.Lock()
	was := s.lastErr
	s.lastErr = ""
	s.mu.Unlock()
	if was != "" && s.op != nil {
		s.op.sourceOK(s.Address)
	}
}

// Scenes are the scenes the bus may show, in the switcher's order (none
// for an AUX bus showing one source). The slice is never changed.
func (bs *BusState) Scenes() []string {
	if p := bs.scenes.Load(); p != nil {
		return *p
	}
	return nil
}

// BusState is what a bus shows and has counted, kept across restarts.
type BusState struct {
	Address string
	Kind    string // program | aux
	// scenes are the scenes the bus may show, in the switcher's order;
	// ApplyLive swaps in a longer list (scenes only ever join the end,
	// so an index the switcher holds keeps its scene).
	scenes atomic.Pointer[[]string]
	period int64
	// pollNs is input_poll_ms in ns: the longest a compositor waits
	// between looks at its inputs. State holds it so that a change on air
	// (ApplyLive) outlives a restart of the compositor.
	pollNs atomic.Int64

	wake *runtime.Signal // notified for a switch request: look at once

	// Audio is the bus's mix and meter; audioSources the sources the plan
	// feeds it, in the compositor's input order.
	Audio *BusAudio
	// (swapped whole when a source is added on air: read it through
	// audioSourceList).
	audioSources atomic.Pointer[[]string]

	mu       sync.Mutex
	switcher *playout.Switcher
	ticks    uint64
	first    int64 // the first tick drawn; -1 before
	missed   uint64
	repeats  uint64
	skipped  uint64
	outDrops uint64
	cuts     [cutHistory]CutRecord // a ring: switch i is cuts[i%cutHistory]
	switches uint64                // switches asked for
	drawn    uint64                // switches up to here have their tick
	byKind   [3]uint64             // switches by playout.Kind
	timing   playout.Timing
	onAirAt  int64 // the tick last drawn
	// landed is told of each switch as a tick shows it (the as-run log).
	landed func(*CutRecord)
}

// cutHistory is how many of the latest switches a bus keeps, for /status
// and the summary; older ones are only counted.
const cutHistory = 32

// CutRecord logs one switch: when it was asked for and the tick it landed
// on. Times count from the start of the run (tick 0).
type CutRecord struct {
	Scene      string `json:"scene"`
	Kind       string `json:"transition"`
	AskedNs    int64  `json:"asked_ns"`    // when the request arrived
	Tick       int64  `json:"tick"`        // the first tick that showed it; -1 until drawn
	DeadlineNs int64  `json:"deadline_ns"` // that tick's deadline: when it was drawn
	// Timecode is the tick's timecode ("" until drawn); At the timecode
	// the switch was asked for ("" for the next tick) and atTick its tick
	// (-1: the next).
	Timecode string `json:"timecode,omitempty"`
	At       string `json:"at,omitempty"`
	Origin   string `json:"origin,omitempty"` // page, cli, cue, api
	atTick   int64
	next     int64 // when asked, the next tick the bus was to draw
	duration time.Duration
}

// OutputState is what an output has done, kept across restarts.
type OutputState struct {
	Address string
	Kind    string
	Written atomic.Uint64
	Drops   atomic.Uint64
	// The bus's hand-offs to this output (compositor.go): how many found
	// its queue full (each then waited for room, until the hand-off's
	// limit at most), how many of those gave up at the limit (the tick
	// dropped for this output alone), and the longest wait.
	HandOffWaits  atomic.Uint64
	HandOffDrops  atomic.Uint64
	HandOffMaxNs  atomic.Int64
	HandOffWaitNs atomic.Int64 // every wait, summed

	mu      sync.Mutex
	lastErr string
	errors  uint64
	restart uint64
	jpeg    []byte // preview: the latest snapshot
	jpegAt  time.Time
	// A preview's interval_ms and quality: set by its first node from the
	// plan, then only by ApplyLive, so a restarted node keeps a change.
	previewInterval, previewQuality atomic.Int64

	recorder *recorder     // record: the file, kept across restarts
	ffmpeg   *media.FFmpeg // ffmpeg, stream, file, hls: the running node's process (outputs.go)
	served   string        // hls with serve: the directory the status server serves (delivery.go)
	// failedAlone: a delivery output that cannot run (its ffmpeg lacks the
	// encoder) and drops the bus's frames (delivery.go).
	failedAlone bool
}

func (o *OutputState) fail(err error) {
	o.mu.Lock()
	o.lastErr = err.Error()
	o.errors++
	o.mu.Unlock()
}

// newState prepares to run p. runs reports whether the backend runs a kind.
func newState(p *plan.Plan, opts Options, backend string, runs func(kind string) bool) (*State, error) {
	if opts.Clock == nil {
		opts.Clock = runtime.Now
	}
	rate := p.FrameRate
	tcRate, err := timecode.NewRate(rate.Num, rate.Den)
	if err != nil {
		return nil, fmt.Errorf("plan %q: %v", p.Show, err)
	}
	wall := time.Now()
	b := &State{
		plan: p, opts: opts, origin: opts.Clock(), rate: rate,
		scenes: map[string]*plan.Scene{}, buses: map[string]*BusState{}, outputs: map[string]*OutputState{},
	}
	t := &topology{nodes: map[string]*plan.Node{}, sources: map[string]*SourceState{}, stamps: map[string]uint16{}, feeders: map[[2]string]bool{}}
	b.topo.Store(t) // filled in here, before anything else can read it
	for i := range p.Scenes {
		b.scenes[p.Scenes[i].Address] = &p.Scenes[i]
	}
	period := 1_000_000_000 * rate.Den / rate.Num
	var problems []string
	for i := range p.Nodes {
		n := &p.Nodes[i]
		t.nodes[n.ID] = n
		switch {
		case strings.HasPrefix(n.Address, "source."):
			t.addSource(n.Address)
		case n.Kind == "compositor":
			prm, err := Params[compositorParams](n)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			bs := &BusState{Address: n.Address, Kind: prm.Bus, period: period, first: -1}
			aprm, err := Params[AudioParams](n)
			if err == nil {
				bs.Audio, err = newBusAudio(aprm)
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", n.ID, err))
				continue
			}
			if b.tc == nil {
				if b.tc, err = newShowClock(tcRate, prm.TimecodeStart, wall, b.origin); err != nil {
					problems = append(problems, fmt.Sprintf("%s: %v", n.ID, err))
				}
			}
			scenes := append([]string{}, prm.Scenes...)
			if prm.Scene != "" && !contains(scenes, prm.Scene) {
				scenes = append([]string{prm.Scene}, scenes...)
			}
			bs.scenes.Store(&scenes)
			bs.pollNs.Store(int64(prm.InputPollMs) * 1_000_000)
			start := 0
			if prm.Scene != "" {
				start = index(scenes, prm.Scene)
			}
			for _, sc := range scenes {
				if _, ok := b.scenes[sc]; !ok && !isSourceView(sc) { // a source's view joins below (aux.go)
					problems = append(problems, fmt.Sprintf("%s names %s, which the plan does not hold", n.ID, sc))
				}
			}
			bs.switcher = playout.NewSwitcher(start)
			sig, err := runtime.NewSignal()
			if err != nil {
				return nil, err
			}
			bs.wake = sig
			b.buses[n.Address] = bs
		case strings.HasPrefix(n.Kind, "output_"):
			b.outputs[n.Address] = &OutputState{Address: n.Address, Kind: strings.TrimPrefix(n.Kind, "output_")}
		}
		if !runs(n.Kind) {
			problems = append(problems, fmt.Sprintf("node %s: kind %s does not run on the %s backend", n.ID, n.Kind, backend))
		}
	}
	for _, n := range t.nodes {
		if bs := b.buses[n.Address]; bs != nil && n.Kind == "compositor" {
			if err := b.addViews(n, bs); err != nil {
				problems = append(problems, err.Error())
			}
		}
	}
	for _, e := range p.Edges {
		to, from := t.nodes[e.To], t.nodes[e.From]
		if to == nil || from == nil || to.Kind != "compositor" || b.buses[to.Address] == nil {
			continue
		}
		t.feeders[[2]string{from.Address, to.Address}] = true
		bs := b.buses[to.Address]
		bs.addAudioSource(from.Address)
	}
	for _, bs := range b.buses {
		if err := bs.Audio.check(bs.audioSourceList()); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", bs.Address, err))
		}
	}
	if b.tc == nil { // a plan without buses still has a clock
		b.tc, _ = newShowClock(tcRate, "", wall, b.origin)
	}
	if len(problems) == 0 && opts.AsRun != "" {
		if b.asRun, err = OpenAsRun(opts.AsRun, opts.AsRunFsync, opts.OpenFile, opts.Log); err != nil {
			b.Close()
			return nil, err
		}
	}
	for _, bs := range b.buses {
		bs := bs
		bs.landed = func(c *CutRecord) { b.switchDrawn(bs, c) }
	}
	if len(problems) == 0 {
		b.op, b.snaps, b.metrics = newOperator(b), newSnapshots(b), newMetrics(b.buses)
		for _, src := range t.sources {
			src.op = b.op
		}
		b.tally = startTally(b)
	}
	if len(problems) > 0 {
		b.Close()
		return nil, fmt.Errorf("plan %q cannot run on the %s backend:\n  %s\n(a plan compiled for another backend, or kinds this build's %s backend does not run yet: `onair nodes` says which backend runs each kind; try another -backend)", p.Show, backend, strings.Join(problems, "\n  "), backend)
	}
	return b, nil
}

// Source is the state of the source at address (a node's Address).
func (b *State) Source(address string) *SourceState { return b.sourceMap()[address] }

// SourceFile is the file a source's nodes read (the path param of the
// first of them, by id, that has one: its input_rec or its nvdec_file),
// resolved; "" for none. A decoder fed over an edge (the CUDA backend's
// dec_video) finds its source's sound track here.
func (b *State) SourceFile(address string) string {
	nodes := b.nodeMap()
	ids := make([]string, 0, len(nodes))
	for id, n := range nodes {
		if n.Address == address && n.Params.String("path") != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	sort.Strings(ids)
	return b.Resolve(nodes[ids[0]].Params.String("path"))
}

// StampID is the number test patterns of the source at address draw into
// their pictures (1, 2, ... in plan order), so a test can tell sources apart.
func (b *State) StampID(address string) uint16 { return b.topology().stamps[address] }

// Resolve turns a path of the plan (relative to the show) into one usable
// from here.
func (b *State) Resolve(p string) string {
	if p == "" || filepath.IsAbs(p) || b.opts.BaseDir == "" {
		return p
	}
	return filepath.Join(b.opts.BaseDir, p)
}

// Close frees what the backend holds (the buses' wake signals).
func (b *State) Close() {
	if b.snaps != nil {
		b.snaps.close()
	}
	b.tally.close()
	if b.op != nil {
		b.op.close()
	}
	b.asRun.Close()
	for _, bs := range b.buses {
		if bs.wake != nil {
			bs.wake.Close()
		}
	}
}

// Switch puts scene on bus with a transition ("cut", "fade", "wipe") lasting
// d. bus and scene may be written with or without their "bus." and
// "scene." prefixes. It takes effect at the first tick drawn after it.
func (b *State) Switch(bus, scene, kind string, d time.Duration) error {
	return b.switchTo(bus, scene, kind, d, "", OriginAPI)
}

// switchTo is Switch, at the tick labelled at ("": the next tick drawn),
// asked for from origin.
func (b *State) switchTo(bus, scene, kind string, d time.Duration, at, origin string) error {
	bs, ok := b.buses[withPrefix("bus.", bus)]
	if !ok {
		return fmt.Errorf("no bus %q in this show (buses: %s): %w", bus, strings.Join(b.busNames(), ", "), ErrNotFound)
	}
	k, err := playout.ParseKind(kind)
	if err != nil {
		return fmt.Errorf("%v: %w", err, ErrInvalid)
	}
	sc := routeAddress(scene)
	if bs.Kind == "aux" && len(bs.Scenes()) == 0 {
		return fmt.Errorf("%s is an AUX bus showing one source and routes to nothing else (list what it may show in its routes, and restart): %w", bs.Address, ErrInvalid)
	}
	i := index(bs.Scenes(), sc)
	if sc == BlackView && bs.Kind == "program" {
		i = blackIndex // to black (aux.go)
	}
	if err := b.startingFor(sc); i < 0 && err != nil {
		return err
	}
	if i < 0 {
		return fmt.Errorf("%s cannot show %q (its scenes: %s): %w", bs.Address, scene, strings.Join(bs.Scenes(), ", "), ErrNotFound)
	}
	ticks := int64(0)
	if k != playout.Cut {
		ticks = max(1, int64(d)/bs.period)
	}
	atTick := int64(-1)
	if at != "" {
		if atTick, err = b.TickOf(at); err != nil {
			return fmt.Errorf("%s: -at %w", bs.Address, err)
		}
	}
	now := b.opts.Clock()
	bs.mu.Lock()
	if atTick >= 0 {
		if err := bs.switcher.RequestAt(k, i, ticks, atTick); err != nil {
			bs.mu.Unlock()
			var late *playout.LateError
			if errors.As(err, &late) {
				return b.lateError(bs, at, late)
			}
			return err
		}
	} else {
		bs.switcher.Request(k, i, ticks)
	}
	rec := CutRecord{Scene: sc, Kind: k.String(), AskedNs: now - b.origin, Tick: -1, atTick: atTick, Origin: origin, duration: d, next: bs.switcher.Last() + 1}
	if atTick >= 0 {
		rec.At = b.TimecodeAt(atTick).String()
	}
	bs.cuts[bs.switches%cutHistory] = rec
	bs.switches++
	if int(k) < len(bs.byKind) {
		bs.byKind[k]++
	}
	bs.mu.Unlock()
	bs.wake.Notify()
	b.op.switched(bs.Address, sc, k.String(), d, now-b.origin, &rec)
	b.switchAsked(bs, &rec)
	return nil
}

// landSwitches gives the switches no tick has shown yet the tick k that
// shows them, drawn at deadlineNs. Only those are looked at: the ring's
// newest, from the last one drawn. The caller holds bs.mu.
func (bs *BusState) landSwitches(k, deadlineNs int64) {
	from := bs.drawn
	if bs.switches > cutHistory && from < bs.switches-cutHistory {
		from = bs.switches - cutHistory // older ones have left the ring
	}
	all := true // every switch up to i has its tick
	for i := from; i < bs.switches; i++ {
		c := &bs.cuts[i%cutHistory]
		if c.Tick < 0 && c.atTick <= k { // -1: the next tick; else its tick (or the first drawn after it)
			c.Tick, c.DeadlineNs = k, deadlineNs
			if bs.landed != nil {
				bs.landed(c)
			}
		}
		if all && c.Tick >= 0 {
			bs.drawn = i + 1
		} else {
			all = false
		}
	}
}

// recentSwitches returns the switches in the ring, oldest first. The
// caller holds bs.mu.
func (bs *BusState) recentSwitches() []CutRecord {
	n := min(bs.switches, cutHistory)
	out := make([]CutRecord, 0, n)
	for i := bs.switches - n; i < bs.switches; i++ {
		out = append(out, bs.cuts[i%cutHistory])
	}
	return out
}

// Errors Switch wraps, which the control server maps to HTTP codes.
var (
	ErrNotFound = showerr.ErrNotFound
	ErrInvalid  = showerr.ErrInvalid
)

func (b *State) busNames() []string {
	var out []string
	for a := range b.buses {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// Origin is tick 0 of every bus grid, on the monotonic clock.
func (b *State) Origin() int64 { return b.origin }

// Grid is the show's tick grid.
func (b *State) Grid() playout.Grid { return b.grid() }

func (b *State) grid() playout.Grid {
	g, _ := playout.NewGrid(b.rate.Num, b.rate.Den, b.origin)
	return g
}

func withPrefix(prefix, s string) string {
	if strings.HasPrefix(s, prefix) {
		return s
	}
	return prefix + s
}

func contains(list []string, s string) bool { return index(list, s) >= 0 }

func index(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// refused counts a frame an edge toward the buses refused: a drop once the
// edge's consumer has taken a frame (taken), a start drop before (its bus
// was still starting). While the show stops (stopping), the buses stop
// before their sources, and what a source still paces has no bus to go to:
// not counted.
func (s *SourceState) refused(stopping, taken bool) {
	switch {
	case stopping:
	case taken:
		s.Drops.Add(1)
	default:
		s.StartDrops.Add(1)
	}
}

// scene is the scene at addr as the show holds it now; nil when none.
func (b *State) scene(addr string) *plan.Scene {
	b.scenesMu.RLock()
	defer b.scenesMu.RUnlock()
	return b.scenes[addr]
}

// LiveChange is what a running show changes without going off air
// (State.ApplyLive), as compiler/diff's Live yields it. A change to an
// element is given whole: nothing in it stands for "unchanged".
type LiveChange struct {
	// Scenes get new layers; a scene the show lacks is added.
	Scenes []plan.Scene
	// RenameScenes gives scenes new addresses (old address → new, a moved
	// block): every bus that may show one shows it under the new address,
	// at the same place in its list, and the old address is gone. The
	// scene keeps its layers unless Scenes holds it under the new address.
	RenameScenes map[string]string
	// Updates are new values of live params of nodes on air, each
	// checked against its declaration in nodes/ and applied by its kind's
	// live hook (liveHooks): a bus's input_poll_ms and the scenes added at
	// the end of its list, a browser source's import_ttl_ms, a preview's
	// interval_ms and quality.
	Updates []nodes.Update
	// Grow are the nodes of sources new on air, the edges from them into
	// the buses on air (and into an AUX bus from a source on air), their
	// groups and the loops they are placed on (liveadd.go): started and
	// ready before any scene that shows them joins a bus.
	Grow runtime.Extension
}

// Scenes are the scenes bus may show on air, in its list's order; nil
// for a bus the show lacks.
func (b *State) Scenes(bus string) []string {
	if bs := b.buses[bus]; bs != nil {
		return bs.Scenes()
	}
	return nil
}

// Elements are the show elements the change touches, sorted.
func (ch LiveChange) Elements() []string {
	set := map[string]bool{}
	for _, sc := range ch.Scenes {
		set[sc.Address] = true
	}
	for _, to := range ch.RenameScenes {
		set[to] = true
	}
	for _, u := range ch.Updates {
		set[u.Address] = true
	}
	for _, n := range ch.Grow.Nodes {
		set[n.Address] = true
	}
	return sortedKeys(set)
}

// ApplyLive changes the show while it runs. Every bus that may show a
// changed scene draws its new layers from its next tick on, without a cut
// or a missed frame; a compositor waits by a new input_poll_ms from its
// next wait on. Each layer's source must feed every bus that may show
// the scene (the plan's edges, or those ch.Grow adds: only Show.ApplyLive,
// which has the executor, can start them). Every value is checked against the range the nodes/ registry
// declares. It changes nothing unless all of it passes, and returns an
// error wrapping ErrNotFound or ErrInvalid saying what did not and why.
// Its cost is linear in the change and in the lists of the buses it adds
// scenes to or renames scenes on.
func (b *State) ApplyLive(ch LiveChange) error { return b.applyLive(ch, nil) }

// applyLive is ApplyLive; extend starts what ch.Grow adds (nil: a show
// that cannot grow), after every check and before anything changes.
func (b *State) applyLive(ch LiveChange, extend func(runtime.Extension) error) error {
	var problems []string
	grows, gp := b.checkGrow(ch.Grow, extend != nil)
	problems = append(problems, gp...)
	next := make(map[string]*plan.Scene, len(ch.Scenes)+len(ch.RenameScenes))
	for _, sc := range ch.Scenes {
		n := sc
		n.Layers = append([]plan.Layer(nil), sc.Layers...)
		next[sc.Address] = &n
		for i, l := range sc.Layers {
			if _, err := frame.ParseFit(l.Fit); err != nil {
				problems = append(problems, fmt.Sprintf("%s layer %d: %v", sc.Address, i, err))
			}
		}
		// Against the canvas and sources on air (the change's own plan
		// may say anything of them).
		if err := b.plan.CheckScene(sc); err != nil {
			problems = append(problems, err.Error())
		}
	}
	// Renames: the old address must be the show's and stay no one's; the
	// new one must be free.
	gone := make(map[string]bool, len(ch.RenameScenes))
	renamedTo := make(map[string]string, len(ch.RenameScenes)) // new → old
	for _, from := range sortedKeys(ch.RenameScenes) {
		to := ch.RenameScenes[from]
		old := b.scene(from)
		switch {
		case old == nil:
			return fmt.Errorf("renaming %s to %s: the show on air has no scene %s: %w", from, to, from, ErrNotFound)
		case b.scene(to) != nil && ch.RenameScenes[to] == "":
			problems = append(problems, fmt.Sprintf("renaming %s to %s: the show has a scene %s already (rename or remove it in a restart)", from, to, to))
		case renamedTo[to] != "":
			problems = append(problems, fmt.Sprintf("renaming both %s and %s to %s: one address, two scenes", renamedTo[to], from, to))
		}
		renamedTo[to] = from
		gone[from] = true
		if next[to] == nil {
			n := *old
			n.Address = to
			next[to] = &n
		}
	}
	sceneAt := func(addr string) *plan.Scene {
		if sc := next[addr]; sc != nil {
			return sc
		}
		if gone[addr] {
			return nil
		}
		return b.scene(addr)
	}
	// Each update: the registry's checks, then its kind's hook.
	var applies []func()
	pending := &liveScenes{add: map[string][]string{}, renames: ch.RenameScenes}
	for _, u := range ch.Updates {
		k, ok := nodes.Lookup(u.Kind)
		hook := liveHooks[[2]string{u.Kind, u.Param}]
		if !ok || hook == nil {
			problems = append(problems, fmt.Sprintf("%s: %s.%s does not change on air", u.Address, u.Kind, u.Param))
			continue
		}
		if err := k.CheckLive(u.Param, nil, u.Value); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", u.Address, err))
			continue
		}
		apply, err := hook(b, u, pending)
		switch {
		case errors.Is(err, ErrNotFound):
			return err
		case err != nil:
			problems = append(problems, err.Error())
		case apply != nil:
			applies = append(applies, apply)
		}
	}
	// Each bus's scenes after the change, for the buses whose list
	// changes (a copy: the list served is never changed in place).
	lists := map[string][]string{}
	for _, a := range sortedKeys(b.buses) {
		bs := b.buses[a]
		cur := bs.Scenes()
		more, adds := pending.add[a]
		renames := false
		if len(ch.RenameScenes) > 0 {
			for _, sc := range cur {
				if gone[sc] {
					renames = true
					break
				}
			}
		}
		if !adds && !renames {
			continue
		}
		if adds && bs.Kind != "program" && !allViews(more) {
			problems = append(problems, fmt.Sprintf("%s is an AUX bus: it is routed to sources, and to scenes only through its routes", a))
			continue
		}
		list := make([]string, 0, len(cur)+len(more))
		has := make(map[string]bool, len(cur)+len(more))
		for _, sc := range cur {
			if to, ok := ch.RenameScenes[sc]; ok {
				sc = to
			}
			list = append(list, sc)
			has[sc] = true
		}
		for _, sc := range more {
			switch {
			case has[sc]:
				problems = append(problems, fmt.Sprintf("%s shows %s already", a, sc))
			case isSourceView(sc) && sceneAt(sc) == nil:
				// A route to a source, new to the bus: its view (aux.go).
				if v, err := b.newView(a, sc, grows); err != nil {
					problems = append(problems, err.Error())
				} else {
					next[sc] = v
					list = append(list, sc)
					has[sc] = true
				}
			case sceneAt(sc) == nil:
				problems = append(problems, fmt.Sprintf("%s: the show has no scene %s", a, sc))
			default:
				list = append(list, sc)
				has[sc] = true
			}
		}
		lists[a] = list
	}
	// Every scene that changes, is renamed or joins a bus draws only
	// sources that feed each bus that may show it.
	feedCheck := func(bus, addr string) {
		sc := sceneAt(addr)
		for i, l := range sc.Layers {
			if !b.feeds(l.Source, bus) && !grows[[2]string{l.Source, bus}] {
				problems = append(problems, fmt.Sprintf("%s layer %d shows %s, which does not feed %s (the plan sent gives the bus no edge from it)", addr, i, l.Source, bus))
			}
		}
	}
	for _, a := range sortedKeys(b.buses) {
		if list, ok := lists[a]; ok {
			was := len(b.buses[a].Scenes())
			for i, addr := range list {
				if i >= was || next[addr] != nil {
					feedCheck(a, addr)
				}
			}
			continue
		}
		if len(next) == 0 {
			continue
		}
		for _, addr := range b.buses[a].Scenes() {
			if next[addr] != nil {
				feedCheck(a, addr)
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("nothing changed: %s: %w", strings.Join(problems, "; "), ErrInvalid)
	}
	if len(ch.Grow.Nodes) > 0 || len(ch.Grow.Edges) > 0 {
		if err := b.grow(ch.Grow, lists, next, extend); err != nil {
			return err
		}
		defer b.doneAdding() // once the scenes below are on their buses
	}
	b.scenesMu.Lock()
	for addr := range gone {
		if next[addr] == nil {
			delete(b.scenes, addr)
		}
	}
	for addr, sc := range next {
		b.scenes[addr] = sc
	}
	for a, l := range lists {
		l := l
		b.buses[a].scenes.Store(&l)
	}
	b.scenesMu.Unlock()
	if len(ch.RenameScenes) > 0 {
		b.op.renamed(ch.RenameScenes)
	}
	for _, apply := range applies {
		apply()
	}
	b.sceneGen.Add(1) // after the scenes and lists: a compositor that sees it finds them
	for _, bs := range b.buses {
		bs.wake.Notify() // a bus between ticks looks again at once
	}
	return nil
}

// audioSourceList is the sources that feed the bus, whose sound it mixes.
func (bs *BusState) audioSourceList() []string {
	if l := bs.audioSources.Load(); l != nil {
		return *l
	}
	return nil
}

// addAudioSource adds a source to the bus's list (ApplyLive, or while
// the State is made).
func (bs *BusState) addAudioSource(src string) {
	l := append(slices.Clip(bs.audioSourceList()), src)
	bs.audioSources.Store(&l)
}

// feeds reports whether source sends frames to bus's compositor in the
// plan on air (its edges, and those added with a source on air).
func (b *State) feeds(source, bus string) bool {
	return b.topology().feeders[[2]string{source, bus}]
}

// topology is the plan's nodes by id, its sources by address with the id
// each draws into a test pattern, and which source feeds which bus. It
// never changes once stored: a source added on air stores a copy with
// it (State.addSources), so readers on any goroutine need no lock.
type topology struct {
	nodes   map[string]*plan.Node
	sources map[string]*SourceState
	stamps  map[string]uint16 // source address → the id drawn into test patterns
	feeders map[[2]string]bool
}

// addSource adds a source's state, if it is new, while t is not shared.
func (t *topology) addSource(addr string) {
	if _, ok := t.sources[addr]; !ok {
		t.stamps[addr] = uint16(len(t.sources) + 1)
		t.sources[addr] = &SourceState{Address: addr}
	}
}

// topology is what is on air now; empty for a State made outside newState.
func (b *State) topology() *topology {
	if t := b.topo.Load(); t != nil {
		return t
	}
	return &topology{}
}

// nodeMap is the plan's nodes by id, as on air now.
func (b *State) nodeMap() map[string]*plan.Node { return b.topology().nodes }

// sourceMap is the show's sources by address, as on air now.
func (b *State) sourceMap() map[string]*SourceState { return b.topology().sources }
