package show

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/onairhq/onair/events"
)

// The operator's state: the scene on preview of every Program bus, what
// every bus shows on air (both scenes while a transition runs), the tally
// of every source, and the events that tell the page and `onair status
// -watch` about each change as it happens (events.Hub).

// Tally is what a source is on: a Program bus's picture, a Program bus's
// preview, AUX buses.
type Tally struct {
	Program bool     `json:"program"`
	Preview bool     `json:"preview"`
	Aux     []string `json:"aux,omitempty"` // the AUX buses showing it
}

// BusOperator is a bus as the operator sees it.
type BusOperator struct {
	Address string   `json:"address"`
	Kind    string   `json:"kind"`
	Scenes  []string `json:"scenes,omitempty"`
	OnAir   []string `json:"on_air"`            // the scene on air; two while a transition runs
	Next    string   `json:"next,omitempty"`    // the scene last asked for (on air, or about to be)
	Preview string   `json:"preview,omitempty"` // Program buses: the scene on preview
	Sources []string `json:"sources,omitempty"` // AUX buses without scenes: the source shown
	Missed  uint64   `json:"missed_deadlines"`
}

// OperatorStatus is the operator's part of /status and the /events hello.
type OperatorStatus struct {
	Buses   []BusOperator    `json:"buses"`
	Tally   map[string]Tally `json:"tally"`
	Sources []string         `json:"sources"`
}

// operator holds what the operator sees, apart from the counters the
// buses keep.
type operator struct {
	b   *State
	hub *events.Hub

	mu      sync.Mutex
	preview map[string]string // Program bus → scene on preview
	next    map[string]string // bus → the scene last asked for
	visible map[string][]int  // bus → scene indexes drawn on its last tick
	missed  map[string]uint64 // bus → missed deadlines last published
	aux     map[string]string // AUX bus without scenes → its source
	tally   map[string]Tally
}

func newOperator(b *State) *operator {
	op := &operator{b: b, hub: events.NewTimecodeHub(func() string { return b.TimecodeAt(b.tickNow()).String() }), preview: map[string]string{}, next: map[string]string{},
		visible: map[string][]int{}, missed: map[string]uint64{}, aux: map[string]string{}}
	for a, bs := range b.buses {
		if i := bs.switcher.OnAir(); i >= 0 && i < len(bs.Scenes()) {
			op.visible[a] = []int{i}
			op.next[a] = bs.Scenes()[i]
		}
	}
	for _, e := range b.plan.Edges {
		to, from := b.nodeMap()[e.To], b.nodeMap()[e.From]
		if to == nil || from == nil || to.Kind != "compositor" {
			continue
		}
		if bs := b.buses[to.Address]; bs != nil && len(bs.Scenes()) == 0 {
			op.aux[bs.Address] = from.Address
		}
	}
	op.tally = op.computeTally()
	return op
}

func (op *operator) close() { op.hub.Close() }

// computeTally works out every source's tally; op.mu is held.
func (op *operator) computeTally() map[string]Tally {
	t := map[string]Tally{}
	for a := range op.b.sourceMap() {
		t[a] = Tally{}
	}
	w, h := op.b.canvasSize()
	mark := func(scene string, f func(*Tally)) { // the sources visible in it (tally.go)
		sc := op.b.scene(scene)
		if sc == nil {
			return
		}
		for _, l := range op.b.visibleLayers(sc, w, h) {
			x := t[l.Source]
			f(&x)
			t[l.Source] = x
		}
	}
	for _, a := range sortedKeys(op.b.buses) {
		bs := op.b.buses[a]
		onAux := func(x *Tally) {
			if len(x.Aux) == 0 || x.Aux[len(x.Aux)-1] != a {
				x.Aux = append(x.Aux, a)
			}
		}
		if src, ok := op.aux[a]; ok {
			x := t[src]
			onAux(&x)
			t[src] = x
			continue
		}
		for _, i := range op.visible[a] {
			sc, ok := bs.sceneAt(i)
			if !ok {
				continue
			}
			if bs.Kind == "program" {
				mark(sc, func(x *Tally) { x.Program = true })
			} else {
				mark(sc, onAux)
			}
		}
		if p := op.preview[a]; p != "" {
			mark(p, func(x *Tally) { x.Preview = true })
		}
	}
	return t
}

// retally recomputes the tally and publishes it if it changed; op.mu is
// held.
func (op *operator) retally() {
	t := op.computeTally()
	if reflect.DeepEqual(t, op.tally) {
		return
	}
	op.tally = t
	op.hub.Publish("tally", map[string]any{"tally": t})
	op.b.tally.changed()
}

// renamed follows scenes renamed on air (old address → new) in what the
// operator sees: the scene on preview and the one last asked for.
func (op *operator) renamed(to map[string]string) {
	op.mu.Lock()
	defer op.mu.Unlock()
	for _, m := range []map[string]string{op.preview, op.next} {
		for bus, sc := range m {
			if n, ok := to[sc]; ok {
				m[bus] = n
			}
		}
	}
}

// switched is called once a switch was asked for.
func (op *operator) switched(bus, scene, kind string, d time.Duration, askedNs int64, c *CutRecord) {
	op.mu.Lock()
	op.next[bus] = scene
	op.mu.Unlock()
	ev := map[string]any{"bus": bus, "scene": scene, "transition": kind, "duration_ms": d.Milliseconds(), "asked_ns": askedNs, "origin": c.Origin}
	if c.At != "" {
		ev["at"], ev["at_tick"] = c.At, c.atTick
	}
	op.hub.Publish("switch", ev)
}

// ticked is called by a bus's compositor after each tick it drew: the
// scenes it showed (to == from outside a transition) and its missed
// deadlines so far.
func (op *operator) ticked(bs *BusState, k, deadlineNs int64, from, to int, missed uint64) {
	vis := [2]int{from, to}
	n := 1
	if to != from {
		n = 2
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	if m := op.missed[bs.Address]; missed > m {
		op.missed[bs.Address] = missed
		tc := op.b.TimecodeAt(k).String()
		op.hub.Publish("missed_deadline", map[string]any{"bus": bs.Address, "tick": k, "timecode": tc, "missed": missed - m, "missed_total": missed})
		tick := k // its own variable: taking k's address would move k to the heap on every tick
		op.b.asRun.Record(AsRunLine{Event: "missed_deadline", Bus: bs.Address, Tick: &tick, Timecode: tc, Missed: missed - m})
	}
	old := op.visible[bs.Address]
	if len(old) == n && old[0] == vis[0] && (n == 1 || old[1] == vis[1]) {
		return
	}
	op.visible[bs.Address] = append(old[:0], vis[:n]...)
	var names []string
	for _, i := range vis[:n] {
		if sc, ok := bs.sceneAt(i); ok {
			names = append(names, sc)
		}
	}
	op.hub.Publish("on_air", map[string]any{"bus": bs.Address, "on_air": names, "tick": k, "timecode": op.b.TimecodeAt(k).String(), "deadline_ns": deadlineNs - op.b.origin})
	op.retally()
}

// sourceFailed and sourceOK are called when a source's error changes.
func (op *operator) sourceFailed(src, msg string) {
	op.hub.Publish("source_error", map[string]any{"source": src, "error": msg})
	k := op.b.tickNow()
	op.b.asRun.Record(AsRunLine{Event: "source_error", Source: src, Error: msg, Tick: &k, Timecode: op.b.TimecodeAt(k).String()})
}

func (op *operator) sourceOK(src string) {
	op.hub.Publish("source_ok", map[string]any{"source": src})
	k := op.b.tickNow()
	op.b.asRun.Record(AsRunLine{Event: "source_ok", Source: src, Tick: &k, Timecode: op.b.TimecodeAt(k).String()})
}

// status is the operator's view of every bus and source.
func (op *operator) status() OperatorStatus {
	st := OperatorStatus{Tally: map[string]Tally{}, Sources: sortedKeys(op.b.sourceMap())}
	op.mu.Lock()
	defer op.mu.Unlock()
	for _, a := range sortedKeys(op.b.buses) {
		bs := op.b.buses[a]
		bo := BusOperator{Address: a, Kind: bs.Kind, Scenes: bs.Scenes(), OnAir: []string{}, Next: op.next[a], Preview: op.preview[a], Missed: op.missed[a]}
		for _, i := range op.visible[a] {
			if sc, ok := bs.sceneAt(i); ok {
				bo.OnAir = append(bo.OnAir, sc)
			}
		}
		if src, ok := op.aux[a]; ok {
			bo.Sources = []string{src}
		}
		st.Buses = append(st.Buses, bo)
	}
	for k, v := range op.tally {
		st.Tally[k] = v
	}
	return st
}

// SetPreview puts scene on the preview of a Program bus.
func (b *State) SetPreview(bus, scene string) error {
	bs, sc, err := b.busScene(bus, scene)
	if err != nil {
		return err
	}
	if bs.Kind != "program" {
		return fmt.Errorf("%s is an AUX bus: only Program buses have a preview; switch it with cut, fade or wipe: %w", bs.Address, ErrInvalid)
	}
	op := b.op
	op.mu.Lock()
	changed := op.preview[bs.Address] != sc
	op.preview[bs.Address] = sc
	if changed {
		op.hub.Publish("preview", map[string]any{"bus": bs.Address, "preview": sc})
		op.retally()
	}
	op.mu.Unlock()
	return nil
}

// Take puts the preview scene of a Program bus on air with a transition
// ("cut", "fade", "wipe") lasting d; the scene that was on air (or asked
// for last) goes to preview, as on a vision mixer.
func (b *State) Take(bus, kind string, d time.Duration) error {
	return b.TakeAt(bus, kind, d, "", OriginAPI)
}

// TakeAt is Take on the tick labelled at ("": the next tick), asked for
// from origin (the as-run log's).
func (b *State) TakeAt(bus, kind string, d time.Duration, at, origin string) error {
	bs, ok := b.buses[withPrefix("bus.", bus)]
	if !ok {
		return fmt.Errorf("no bus %q in this show (buses: %s): %w", bus, strings.Join(b.busNames(), ", "), ErrNotFound)
	}
	op := b.op
	op.mu.Lock()
	pv, was := op.preview[bs.Address], op.next[bs.Address]
	op.mu.Unlock()
	if bs.Kind != "program" {
		return fmt.Errorf("%s is an AUX bus: only Program buses have a preview to take: %w", bs.Address, ErrInvalid)
	}
	if pv == "" {
		return fmt.Errorf("%s has no scene on preview: set one first (POST /buses/%s/preview {\"scene\": \"scene.NAME\"}): %w", bs.Address, strings.TrimPrefix(bs.Address, "bus."), ErrInvalid)
	}
	if err := b.switchTo(bs.Address, pv, kind, d, at, origin); err != nil {
		return err
	}
	if was != "" && was != pv && was != BlackView { // back from black: the preview stays
		op.mu.Lock()
		if op.preview[bs.Address] == pv {
			op.preview[bs.Address] = was
			op.hub.Publish("preview", map[string]any{"bus": bs.Address, "preview": was})
			op.retally()
		}
		op.mu.Unlock()
	}
	return nil
}

// busScene finds a bus and one of its scenes, with or without prefixes.
func (b *State) busScene(bus, scene string) (*BusState, string, error) {
	bs, ok := b.buses[withPrefix("bus.", bus)]
	if !ok {
		return nil, "", fmt.Errorf("no bus %q in this show (buses: %s): %w", bus, strings.Join(b.busNames(), ", "), ErrNotFound)
	}
	sc := withPrefix("scene.", scene)
	if !contains(bs.Scenes(), sc) {
		if len(bs.Scenes()) == 0 {
			return nil, "", fmt.Errorf("%s shows one source and has no scenes: %w", bs.Address, ErrInvalid)
		}
		return nil, "", fmt.Errorf("%s cannot show %q (its scenes: %s): %w", bs.Address, scene, strings.Join(bs.Scenes(), ", "), ErrNotFound)
	}
	return bs, sc, nil
}

// Operator is the operator's view of every bus and source.
func (b *State) Operator() OperatorStatus { return b.op.status() }

// Events is the show's event hub.
func (b *State) Events() *events.Hub { return b.op.hub }

// SetPreview implements control.Operator.
func (s *Show[F]) SetPreview(bus, scene string) error { return s.State.SetPreview(bus, scene) }

// Take implements control.Operator.
func (s *Show[F]) Take(bus, kind string, d time.Duration) error { return s.State.Take(bus, kind, d) }

// SwitchAt implements control.TimedSwitcher.
func (s *Show[F]) SwitchAt(bus, scene, kind string, d time.Duration, at, origin string) error {
	return s.State.SwitchAt(bus, scene, kind, d, at, origin)
}

// TakeAt implements control.TimedSwitcher.
func (s *Show[F]) TakeAt(bus, kind string, d time.Duration, at, origin string) error {
	return s.State.TakeAt(bus, kind, d, at, origin)
}

// Events implements control.Eventer.
func (s *Show[F]) Events() *events.Hub { return s.State.Events() }

// EventsHello implements control.Eventer: the show's name and the
// operator's view, from which a client follows the events.
func (s *Show[F]) EventsHello() any {
	return map[string]any{"show": s.plan.Show, "backend": s.backend.Name, "frame_rate": s.plan.FrameRate, "operator": s.State.Operator()}
}

// Snapshot implements control.Snapshotter.
func (s *Show[F]) Snapshot(name string, fps int) ([]byte, time.Duration, error) {
	return s.State.Snapshot(name, fps)
}
