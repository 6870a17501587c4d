package show

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/metrics"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/playout"
	"github.com/onairhq/onair/runtime"
)

// Running is a show on air, whatever its backend: what the CLI and the
// control server need of it.
type Running interface {
	// Status, Plan, Switch and Collect are what control.Show asks of a
	// show (nodes never import control; internal/cli checks the fit).
	Status() any
	Plan() []byte
	Switch(bus, scene, kind string, d time.Duration) error
	Collect(func(metrics.Sample))
	// SwitchAt and TakeAt switch on the tick a timecode names, and say
	// where the switch came from (the as-run log's origin): control.TimedSwitcher.
	SwitchAt(bus, scene, kind string, d time.Duration, at, origin string) error
	TakeAt(bus, kind string, d time.Duration, at, origin string) error
	// Summary reads every bus, output and source.
	Summary() Summary
	// Failed is closed when a node failed for good; Err says why.
	Failed() <-chan struct{}
	Err() error
	// Stop stops every node, loop and edge, then frees the backend.
	Stop() error
	// ApplyLive changes the show on air (State.ApplyLive) and, when it
	// did, makes planJSON the plan Plan returns: the plan the change came
	// from, for the next one to be compared against.
	ApplyLive(ch LiveChange, planJSON []byte) error
}

// Show is a plan running on a backend: the runtime's executor and the
// show's state together. It implements Running.
type Show[F Frame] struct {
	stopOnce sync.Once
	stopErr  error
	State    *State
	Exec     *runtime.Executor[F]
	backend  *Backend[F]
	plan     *plan.Plan
	log      *slog.Logger
	planMu   sync.Mutex
	planJSON []byte // the plan running, as last applied
	started  time.Time
	locks    *OutputLocks
}

// The kinds every backend runs with this package's constructors.
func sharedKinds[F Frame](be *Backend[F]) map[string]Constructor[F] {
	with := func(mk func(*State, *Backend[F], plan.Node, *runtime.NodeContext[F]) (runtime.Node[F], error)) Constructor[F] {
		return func(st *State, n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
			return mk(st, be, n, ctx)
		}
	}
	return map[string]Constructor[F]{
		"test_pattern":      newTestPattern[F],
		"realtime":          newRealtime[F],
		"smooth_timestamps": newSmoother[F],
		"one_to_many_nb":    newFanOutOnLoop[F],
		"one_to_many":       newFanOutThread[F],
		"compositor":        with(newCompositor[F]),
		"output_record":     with(newRecordOutput[F]),
		"output_null":       with(newNullOutput[F]),
		"output_ffmpeg":     with(newFFmpegOutput[F]),
		"output_preview":    with(newPreviewOutput[F]),
		"output_stream":     with(newDeliveryOutput[F]), // delivery.go
		"output_file":       with(newDeliveryOutput[F]),
		"output_hls":        with(newDeliveryOutput[F]),
	}
}

// Kinds lists the node kinds a backend runs: its own and the shared ones.
func Kinds[F Frame](be *Backend[F]) []string {
	var out []string
	for k := range sharedKinds(be) {
		out = append(out, k)
	}
	for k := range be.Kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Start runs p on be: it locks the files the outputs write (LockOutputs:
// a show whose recording another show writes does not go on air, and
// touches no file), makes the show's state, starts every group in order and
// waits for each to be ready. The locks are held until Stop. planJSON is
// what GET /plan serves. Before any node starts, Go's scheduler is given
// the processors canvas go_procs asks for (goProcs).
func Start[F Frame](ctx context.Context, be *Backend[F], p *plan.Plan, planJSON []byte, opts Options, log *slog.Logger) (*Show[F], error) {
	goProcs(p, log)
	locks, err := LockOutputs(p, opts.BaseDir)
	if err != nil {
		return nil, err
	}
	shared := sharedKinds(be)
	lookup := func(kind string) (Constructor[F], bool) {
		if mk, ok := be.Kinds[kind]; ok {
			return mk, true
		}
		mk, ok := shared[kind]
		return mk, ok
	}
	st, err := newState(p, opts, be.Name, func(kind string) bool { _, ok := lookup(kind); return ok })
	if err != nil {
		locks.discard()
		return nil, err
	}
	s := &Show[F]{State: st, backend: be, plan: p, log: log, planJSON: planJSON, started: time.Now(), locks: locks}
	x, err := runtime.NewExecutor(p, func(kind string) (runtime.Constructor[F], bool) {
		mk, ok := lookup(kind)
		if !ok {
			return nil, false
		}
		return func(n plan.Node, nctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
			// Every bus's tick grid and every aligned pacer start at the
			// executor's grid origin.
			st.originOnce.Do(func() {
				if nctx.GridOriginNs != 0 {
					st.origin = nctx.GridOriginNs
				}
			})
			return mk(st, n, nctx)
		}, true
	}, runtime.Options{Logger: log})
	if err != nil {
		locks.discard()
		s.free()
		return nil, err
	}
	s.Exec = x
	if err := x.Start(ctx); err != nil {
		locks.discard()
		s.free()
		return nil, err
	}
	st.markOnAir(newStartReport(x.Status().Groups, time.Since(s.started)))
	return s, nil
}

// free lets go of what the run holds, the output locks last (every
// output has closed its file by then).
func (s *Show[F]) free() {
	s.State.Close()
	if s.backend.Close != nil {
		s.backend.Close()
	}
	s.locks.Release()
}

// Stop implements Running. Stopping twice is stopping once: the second
// call returns what the first did.
func (s *Show[F]) Stop() error {
	s.stopOnce.Do(func() {
		s.stopErr = s.Exec.Stop()
		s.free()
	})
	return s.stopErr
}

// Failed implements Running.
func (s *Show[F]) Failed() <-chan struct{} { return s.Exec.Failed() }

// Err implements Running.
func (s *Show[F]) Err() error { return s.Exec.Err() }

// Summary implements Running.
func (s *Show[F]) Summary() Summary { return s.State.Summary() }

// Plan is the plan's JSON.
func (s *Show[F]) Plan() []byte {
	s.planMu.Lock()
	defer s.planMu.Unlock()
	return s.planJSON
}

// maxNamedChanges is how many of the elements a change on air touches
// its "apply" event names (the rest it counts).
const maxNamedChanges = 64

// ApplyLive implements Running.
func (s *Show[F]) ApplyLive(ch LiveChange, planJSON []byte) error {
	extend := func(ext runtime.Extension) error { return s.Exec.Extend(context.Background(), ext) }
	if err := s.State.applyLive(ch, extend); err != nil {
		return err
	}
	// The event and the log name the first elements changed and count the
	// rest, so a change of any size is one small event.
	changed := ch.Elements()
	ev := map[string]any{"changed": changed}
	if len(changed) > maxNamedChanges {
		ev = map[string]any{"changed": changed[:maxNamedChanges], "more": len(changed) - maxNamedChanges}
	}
	if s.log != nil {
		s.log.Info("changed on air", "elements", ev["changed"], "more", len(changed)-len(ev["changed"].([]string)))
	}
	k := s.State.tickNow()
	s.State.asRun.Record(AsRunLine{Event: "live_change", Tick: &k, Timecode: s.State.TimecodeAt(k).String(), Origin: OriginApply, Elements: changed})
	s.State.Events().Publish("apply", ev)
	s.planMu.Lock()
	s.planJSON = planJSON
	s.planMu.Unlock()
	return nil
}

// Switch implements control.Show.
func (s *Show[F]) Switch(bus, scene, kind string, d time.Duration) error {
	return s.State.Switch(bus, scene, kind, d)
}

// SetAudio implements control.Mixer.
func (s *Show[F]) SetAudio(bus string, req audio.Change) error {
	return s.State.SetAudio(bus, req)
}

// Preview serves preview outputs' snapshots.
func (s *Show[F]) Preview(output string) ([]byte, bool) { return s.State.Preview(output) }

// StatusReport is what GET /status returns.
type StatusReport struct {
	Show    string                `json:"show"`
	Backend string                `json:"backend"`
	Uptime  string                `json:"uptime"`
	Summary Summary               `json:"summary"`
	Runtime runtime.Status        `json:"runtime"`
	Timing  map[string]any        `json:"playout_timing"`
	Process runtime.ProcessStatus `json:"process"`
	// Device is what the backend says of its hardware (a GPU: NVML).
	Device any `json:"device,omitempty"`
	// Operator is what every bus shows and has on preview, and every
	// source's tally.
	Operator  OperatorStatus `json:"operator"`
	FrameRate string         `json:"frame_rate"`
	// Timecode is the show's SMPTE timecode: its rate, tick 0's, now's
	// and each bus's last tick's.
	Timecode TimecodeStatus `json:"timecode"`
	// AsRun is what the as-run log wrote and lost; absent without one.
	AsRun *AsRunStatus `json:"as_run,omitempty"`
}

// Status implements control.Show.
func (s *Show[F]) Status() any {
	rs := s.Exec.Status()
	sum := s.State.Summary()
	timing := map[string]any{}
	for _, b := range sum.Buses {
		timing[b.Address] = b.Timing
	}
	rep := StatusReport{Show: s.plan.Show, Backend: s.backend.Name, Uptime: time.Since(s.started).Round(time.Millisecond).String(),
		Summary: sum, Runtime: rs, Timing: timing, Process: rs.Process, Operator: s.State.Operator(), FrameRate: s.plan.FrameRate.String(),
		Timecode: s.State.timecodeStatus(), AsRun: s.State.asRun.Status()}
	if s.backend.Device != nil {
		rep.Device = s.backend.Device()
	}
	return rep
}

// Summary is what a run did: per bus, output and source.
type Summary struct {
	// Start is how long the show waited to go on air; nil before it did.
	Start   *StartReport    `json:"start,omitempty"`
	Buses   []BusSummary    `json:"buses"`
	Outputs []OutputSummary `json:"outputs"`
	Sources []SourceSummary `json:"sources"`
}

// BusSummary is one bus's counts.
type BusSummary struct {
	Address        string            `json:"address"`
	Kind           string            `json:"kind"`
	OnAir          string            `json:"on_air,omitempty"`
	Ticks          uint64            `json:"ticks"`
	FirstTick      int64             `json:"first_tick"` // the first tick drawn (tick 0 is the start of the run)
	Missed         uint64            `json:"missed_deadlines"`
	Repeats        uint64            `json:"repeats"`
	Skipped        uint64            `json:"skipped"` // input frames replaced by a newer one before any tick showed them
	OutputDrops    uint64            `json:"output_drops"`
	Switches       uint64            `json:"switches"`                   // every switch asked for
	SwitchesByKind map[string]uint64 `json:"switches_by_kind,omitempty"` // the same by transition: cut, fade, wipe
	Cuts           []CutRecord       `json:"cuts,omitempty"`             // the latest 32 switches, oldest first
	Timing         TimingSummary     `json:"timing"`
	// Audio is the bus's meter and mix.
	Audio *AudioStatus `json:"audio,omitempty"`
	// Missed and Repeats count from the moment the show went on air;
	// StartMissed and StartRepeats are the start's, before it (onair.go).
	StartMissed  uint64 `json:"start_missed_deadlines"`
	StartRepeats uint64 `json:"start_repeats"`
}

// TimingSummary is playout.timing in quarters of a frame period.
type TimingSummary struct {
	Buckets   []string                       `json:"buckets"` // bucket labels in frame periods
	Draw      [playout.QuarterBuckets]uint64 `json:"draw"`    // the whole tick, deadline to commit
	Wake      [playout.QuarterBuckets]uint64 `json:"wake"`    // the parts, which add up to it: wake, queue, gpu_wait, hand_off
	Queue     [playout.QuarterBuckets]uint64 `json:"queue"`
	GPUWait   [playout.QuarterBuckets]uint64 `json:"gpu_wait"`
	HandOff   [playout.QuarterBuckets]uint64 `json:"hand_off"`
	MaxDrawMs float64                        `json:"max_draw_ms"`
}

// OutputSummary is one output's counts.
type OutputSummary struct {
	Address   string `json:"address"`
	Kind      string `json:"kind"`
	Written   uint64 `json:"frames"`
	Drops     uint64 `json:"drops"`
	Errors    uint64 `json:"errors"`
	Restarts  uint64 `json:"restarts"`
	LastError string `json:"last_error,omitempty"`
	// The bus's hand-offs to this output: how many found its queue full
	// and waited, how many of those dropped the tick at the limit (half a
	// period after its deadline), and the longest wait.
	HandOffWaits     uint64  `json:"hand_off_waits"`
	HandOffDrops     uint64  `json:"hand_off_drops"`
	HandOffMaxWaitMs float64 `json:"hand_off_max_wait_ms"`
	HandOffWaitS     float64 `json:"hand_off_wait_seconds"` // every wait, summed
	// An ffmpeg output's encoder: bytes out (every process's) and the
	// running one's speed against real time (1 keeps up; below 1 it falls
	// behind and its queue drops frames).
	Bytes       uint64  `json:"bytes,omitempty"`
	EncodeSpeed float64 `json:"encode_speed,omitempty"`
	// State is an ffmpeg output's: starting, delivering, retrying (its
	// last process failed: a destination down, an encoder that exits) or
	// stopped; "failed" for one that cannot run at all (an encoder its
	// ffmpeg lacks). Reconnects counts its returns from retrying to
	// delivering.
	State      string `json:"state,omitempty"`
	Reconnects uint64 `json:"reconnects,omitempty"`
	// PID is the running ffmpeg process's (0: none running).
	PID int `json:"pid,omitempty"`
}

// SourceSummary is one source's counts.
type SourceSummary struct {
	Address   string `json:"address"`
	Produced  uint64 `json:"produced"`
	Paced     uint64 `json:"paced"`
	Underruns uint64 `json:"underruns"` // from the moment the show went on air
	Drops     uint64 `json:"drops"`     // the same
	// StartDrops are frames refused before the show went on air: before
	// the bus they were for had started (SourceState.StartDrops), or while
	// later groups were starting. The start's, not counted as drops.
	StartDrops uint64 `json:"start_drops"`
	Errors     uint64 `json:"errors"`
	LastError  string `json:"last_error,omitempty"`
	// Browser is a browser source's receiver and import counts.
	Browser *BrowserSummary `json:"browser,omitempty"`
	// Live is a live source's transport and frame-sync counts.
	Live *LiveSummary `json:"live,omitempty"`
	// StampAgesMs is, for the last frame released that carried stamps
	// (canvas frame_metadata), how many ms before its release each stamped
	// moment was: decode_time 40 is a picture decoded 40 ms before it went
	// to the buses. Absent when the show stamps nothing (the default).
	StampAgesMs map[string]float64 `json:"stamp_ages_ms,omitempty"`
	// Audio is the source's meter; absent for a silent source.
	Audio *AudioStatus `json:"audio,omitempty"`
	// SoundLate is how many pictures went on with silence because their
	// sound was not decoded yet (SourceState.SoundLate).
	SoundLate uint64 `json:"sound_late,omitempty"`
	// StartUnderruns are underruns before the show went on air.
	StartUnderruns uint64 `json:"start_underruns"`
}

var bucketLabels = func() []string {
	out := make([]string, playout.QuarterBuckets)
	for i := range out {
		out[i] = playout.BucketLabel(i)
	}
	return out
}()

// Summary reads every bus, output and source, in address order.
func (b *State) Summary() Summary {
	marks := b.marks.Load()
	var s Summary
	if marks != nil {
		s.Start = marks.start
	}
	for _, a := range sortedKeys(b.buses) {
		bs := b.buses[a]
		bs.mu.Lock()
		sum := BusSummary{Address: a, Kind: bs.Kind, Ticks: bs.ticks, FirstTick: bs.first, Missed: bs.missed, Repeats: bs.repeats, Skipped: bs.skipped, OutputDrops: bs.outDrops,
			Switches: bs.switches, Cuts: bs.recentSwitches()}
		for k, n := range bs.byKind {
			if n > 0 {
				if sum.SwitchesByKind == nil {
					sum.SwitchesByKind = map[string]uint64{}
				}
				sum.SwitchesByKind[playout.Kind(k).String()] = n
			}
		}
		if sc, ok := bs.sceneAt(bs.switcher.OnAir()); ok {
			sum.OnAir = sc
		}
		t := bs.timing
		bs.mu.Unlock()
		sum.Timing = TimingSummary{Buckets: bucketLabels, Draw: t.Draw.Buckets, Wake: t.Wake.Buckets, Queue: t.Queue.Buckets, GPUWait: t.GPUWait.Buckets, HandOff: t.HandOff.Buckets,
			MaxDrawMs: float64(t.Draw.MaxNs) / 1e6}
		marks.bus(&sum)
		s.Buses = append(s.Buses, sum)
	}
	for _, a := range sortedKeys(b.outputs) {
		o := b.outputs[a]
		o.mu.Lock()
		s.Outputs = append(s.Outputs, OutputSummary{Address: a, Kind: o.Kind, Written: o.Written.Load(), Drops: o.Drops.Load(),
			Errors: o.errors, Restarts: o.restart, LastError: o.lastErr,
			HandOffWaits: o.HandOffWaits.Load(), HandOffDrops: o.HandOffDrops.Load(), HandOffMaxWaitMs: float64(o.HandOffMaxNs.Load()) / 1e6, HandOffWaitS: float64(o.HandOffWaitNs.Load()) / 1e9})
		ff := o.ffmpeg
		o.mu.Unlock()
		if ff != nil {
			fs, out := ff.Stats(), &s.Outputs[len(s.Outputs)-1]
			out.Bytes, out.EncodeSpeed, out.State, out.Reconnects, out.PID = uint64(fs.Bytes), fs.Speed, fs.State(), uint64(fs.Reconnects), fs.PID
		} else if o.failedAlone {
			s.Outputs[len(s.Outputs)-1].State = "failed"
		}
	}
	for _, a := range sortedKeys(b.sourceMap()) {
		src := b.sourceMap()[a]
		src.mu.Lock()
		s.Sources = append(s.Sources, SourceSummary{Address: a, Produced: src.Produced.Load(), Paced: src.Paced.Load(),
			Underruns: src.Underrun.Load(), Drops: src.Drops.Load(), StartDrops: src.StartDrops.Load(), Errors: src.errors, LastError: src.lastErr, Browser: src.browserSummary(), Live: src.liveSummary(),
			StampAgesMs: src.stampAges(), SoundLate: src.SoundLate.Load()})
		src.mu.Unlock()
		marks.source(&s.Sources[len(s.Sources)-1])
	}
	// The meters last, after every counter: reading them takes a while,
	// which would otherwise fall between the buses' counts and the
	// outputs' (a bus's output drops and an output's hand-off drops read
	// a tick apart).
	for i := range s.Buses {
		s.Buses[i].Audio = b.buses[s.Buses[i].Address].audioStatus()
	}
	for i := range s.Sources {
		s.Sources[i].Audio = b.sourceMap()[s.Sources[i].Address].audioStatus()
	}
	return s
}

// WriteText prints the summary for a person at the end of a run.
func (s Summary) WriteText(w io.Writer) {
	s.writeStart(w)
	// One column of names, as wide as the longest (22 at least).
	col := 22
	for _, b := range s.Buses {
		col = max(col, len(b.Address))
	}
	for _, o := range s.Outputs {
		col = max(col, len(o.Address))
	}
	for _, src := range s.Sources {
		col = max(col, len(src.Address))
	}
	fmt.Fprintln(w, "Buses:")
	for _, b := range s.Buses {
		fmt.Fprintf(w, "  %-*s %-7s %6d frames, %s, %d repeats, %d skipped, %d output drops", col, b.Address, b.Kind, b.Ticks, plural(b.Missed, "missed deadline", "missed deadlines"), b.Repeats, b.Skipped, b.OutputDrops)
		if b.OnAir != "" {
			fmt.Fprintf(w, ", on air: %s", b.OnAir)
		}
		fmt.Fprintln(w)
		if b.Switches > 0 {
			fmt.Fprintf(w, "      %s", plural(b.Switches, "switch", "switches"))
			sep := " ("
			for _, k := range []string{"cut", "fade", "wipe"} {
				if n := b.SwitchesByKind[k]; n > 0 {
					fmt.Fprintf(w, "%s%d %s", sep, n, k)
					sep = ", "
				}
			}
			if sep == ", " {
				fmt.Fprint(w, ")")
			}
			if uint64(len(b.Cuts)) < b.Switches {
				fmt.Fprintf(w, "; the last %d:", len(b.Cuts))
			} else {
				fmt.Fprint(w, ":")
			}
			fmt.Fprintln(w)
		}
		for _, c := range b.Cuts {
			if c.Tick < 0 {
				fmt.Fprintf(w, "      %s to %s asked at %.3fs, not drawn yet\n", c.Kind, c.Scene, float64(c.AskedNs)/1e9)
				continue
			}
			fmt.Fprintf(w, "      %s to %s asked at %.3fs, on tick %d (drawn at %.3fs), timecode %s\n", c.Kind, c.Scene, float64(c.AskedNs)/1e9, c.Tick, float64(c.DeadlineNs)/1e9, c.Timecode)
		}
	}
	fmt.Fprintln(w, "Outputs:")
	for _, o := range s.Outputs {
		fmt.Fprintf(w, "  %-*s %-7s %6d frames, %d drops", col, o.Address, o.Kind, o.Written, o.Drops)
		if o.Restarts > 0 {
			fmt.Fprintf(w, ", %d restarts", o.Restarts)
		}
		if o.HandOffWaits > 0 {
			fmt.Fprintf(w, ", %d hand-offs waited (longest %.1f ms, %d gave up)", o.HandOffWaits, o.HandOffMaxWaitMs, o.HandOffDrops)
		}
		if o.Bytes > 0 {
			fmt.Fprintf(w, ", %d bytes", o.Bytes)
		}
		if o.Reconnects > 0 {
			fmt.Fprintf(w, ", %d reconnects", o.Reconnects)
		}
		if o.LastError != "" {
			fmt.Fprintf(w, ", last error: %s", o.LastError)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "Sources:")
	for _, src := range s.Sources {
		fmt.Fprintf(w, "  %-*s %-7s %6d frames, %d drops, %d underruns", col, src.Address, "", src.Paced, src.Drops, src.Underruns)
		if src.StartDrops > 0 {
			fmt.Fprintf(w, ", %d refused before going on air", src.StartDrops)
		}
		if src.StartUnderruns > 0 {
			fmt.Fprintf(w, ", %d underruns before going on air", src.StartUnderruns)
		}
		if src.SoundLate > 0 {
			fmt.Fprintf(w, ", %d pictures with late sound (silence)", src.SoundLate)
		}
		fmt.Fprint(w, src.Browser.text())
		fmt.Fprint(w, src.Live.text())
		if src.LastError != "" {
			fmt.Fprintf(w, ", ERROR: %s", src.LastError)
		}
		fmt.Fprintln(w)
	}
}

// Collect implements control.Show: the Prometheus metrics.
func (s *Show[F]) Collect(emit func(metrics.Sample)) {
	if s.backend.DeviceMetrics != nil {
		s.backend.DeviceMetrics(emit)
	}
	sum := s.State.Summary()
	l := func(k, v string) [][2]string { return [][2]string{{k, v}} }
	if sum.Start != nil {
		emit(metrics.Sample{Name: "onair_start_wait_seconds", Help: "How long the show's start waited for its groups to be ready before it went on air.", Kind: metrics.Gauge, Value: sum.Start.WaitedMs / 1e3})
	}
	for _, b := range sum.Buses {
		lb := l("bus", b.Address)
		emit(metrics.Sample{Name: "onair_bus_frames_total", Help: "Ticks drawn and handed to the outputs.", Kind: metrics.Counter, Labels: lb, Value: float64(b.Ticks)})
		emit(metrics.Sample{Name: "onair_bus_missed_deadlines_total", Help: "Ticks not drawn before the next tick's deadline, from the moment the show went on air.", Kind: metrics.Counter, Labels: lb, Value: float64(b.Missed)})
		emit(metrics.Sample{Name: "onair_bus_repeats_total", Help: "Visible layers that showed the previous tick's frame again, from the moment the show went on air.", Kind: metrics.Counter, Labels: lb, Value: float64(b.Repeats)})
		emit(metrics.Sample{Name: "onair_bus_skipped_frames_total", Help: "Input frames replaced by a newer one before any tick showed them.", Kind: metrics.Counter, Labels: lb, Value: float64(b.Skipped)})
		emit(metrics.Sample{Name: "onair_bus_output_drops_total", Help: "Ticks an output could not take.", Kind: metrics.Counter, Labels: lb, Value: float64(b.OutputDrops)})
		collectAudio(emit, "bus", lb, b.Audio)
	}
	for _, o := range sum.Outputs {
		lo := [][2]string{{"output", o.Address}, {"kind", o.Kind}}
		emit(metrics.Sample{Name: "onair_output_frames_total", Help: "Frames an output wrote.", Kind: metrics.Counter, Labels: lo, Value: float64(o.Written)})
		emit(metrics.Sample{Name: "onair_output_drops_total", Help: "Frames an output dropped.", Kind: metrics.Counter, Labels: lo, Value: float64(o.Drops)})
		emit(metrics.Sample{Name: "onair_output_errors_total", Help: "Output errors (ffmpeg exits and stalls, write failures).", Kind: metrics.Counter, Labels: lo, Value: float64(o.Errors)})
		emit(metrics.Sample{Name: "onair_output_hand_off_waits_total", Help: "Ticks whose hand-off found the output's queue full and waited for room.", Kind: metrics.Counter, Labels: lo, Value: float64(o.HandOffWaits)})
		emit(metrics.Sample{Name: "onair_output_hand_off_drops_total", Help: "Ticks the output missed: its queue was still full half a frame period after the tick's deadline.", Kind: metrics.Counter, Labels: lo, Value: float64(o.HandOffDrops)})
		emit(metrics.Sample{Name: "onair_output_hand_off_wait_seconds_total", Help: "Time the hand-offs to the output waited for room, summed.", Kind: metrics.Counter, Labels: lo, Value: o.HandOffWaitS})
		if o.Bytes > 0 || o.EncodeSpeed > 0 {
			emit(metrics.Sample{Name: "onair_output_bytes_total", Help: "Bytes an ffmpeg output's encoder wrote.", Kind: metrics.Counter, Labels: lo, Value: float64(o.Bytes)})
			emit(metrics.Sample{Name: "onair_output_encode_speed", Help: "An ffmpeg output's encoding speed against real time (1 keeps up).", Kind: metrics.Gauge, Labels: lo, Value: o.EncodeSpeed})
		}
		if o.State != "" {
			emit(metrics.Sample{Name: "onair_output_reconnects_total", Help: "An ffmpeg output's returns to delivering after its process failed (a destination that was down and came back).", Kind: metrics.Counter, Labels: lo, Value: float64(o.Reconnects)})
		}
		emit(metrics.Sample{Name: "onair_output_restarts_total", Help: "Output restarts: ffmpeg processes started again, record files opened again after a write error.", Kind: metrics.Counter, Labels: lo, Value: float64(o.Restarts)})
	}
	for _, src := range sum.Sources {
		ls := l("source", src.Address)
		emit(metrics.Sample{Name: "onair_source_frames_total", Help: "Frames a source's pacer released.", Kind: metrics.Counter, Labels: ls, Value: float64(src.Paced)})
		emit(metrics.Sample{Name: "onair_source_drops_total", Help: "Frames dropped between a source and the buses, from the moment the show went on air.", Kind: metrics.Counter, Labels: ls, Value: float64(src.Drops)})
		emit(metrics.Sample{Name: "onair_source_start_drops_total", Help: "Frames a source paced that were refused before the show went on air: never due on air, not counted as drops.", Kind: metrics.Counter, Labels: ls, Value: float64(src.StartDrops)})
		emit(metrics.Sample{Name: "onair_source_underruns_total", Help: "Releases that found no frame from the source, from the moment the show went on air.", Kind: metrics.Counter, Labels: ls, Value: float64(src.Underruns)})
		emit(metrics.Sample{Name: "onair_source_sound_late_total", Help: "Pictures that went on with silence because their file's sound was not decoded yet.", Kind: metrics.Counter, Labels: ls, Value: float64(src.SoundLate)})
		emit(metrics.Sample{Name: "onair_source_start_underruns_total", Help: "Releases that found no frame from the source after its first frame and before the show went on air: the start's, not on air.", Kind: metrics.Counter, Labels: ls, Value: float64(src.StartUnderruns)})
		emit(metrics.Sample{Name: "onair_source_errors_total", Help: "Source errors (a missing or broken file).", Kind: metrics.Counter, Labels: ls, Value: float64(src.Errors)})
		up := 1.0
		if src.LastError != "" {
			up = 0
		}
		emit(metrics.Sample{Name: "onair_source_up", Help: "1 when the source delivers its media, 0 while it shows black for an error.", Kind: metrics.Gauge, Labels: ls, Value: up})
		collectBrowser(emit, src)
		collectLive(emit, src)
		collectAudio(emit, "source", ls, src.Audio)
	}
	rs := s.Exec.Status()
	for _, lp := range rs.Loops {
		ll := l("loop", lp.Name)
		emit(metrics.Sample{Name: "onair_loop_wakeups_total", Help: "Returns from epoll_wait.", Kind: metrics.Counter, Labels: ll, Value: float64(lp.Wakeups)})
		emit(metrics.Sample{Name: "onair_loop_handlers_total", Help: "Handlers, timers and work items run.", Kind: metrics.Counter, Labels: ll, Value: float64(lp.Handlers)})
		emit(metrics.Sample{Name: "onair_loop_cpu_seconds_total", Help: "CPU time of the loop's thread.", Kind: metrics.Counter, Labels: ll, Value: float64(lp.Thread.CPUNs) / 1e9})
		emit(metrics.Sample{Name: "onair_loop_run_queue_seconds_total", Help: "Time the loop's thread was runnable without a core.", Kind: metrics.Counter, Labels: ll, Value: float64(lp.Thread.RunQueueNs) / 1e9})
	}
	for _, e := range rs.Edges {
		le := l("edge", e.Name)
		emit(metrics.Sample{Name: "onair_edge_frames_queued", Help: "Frames waiting on an edge now.", Kind: metrics.Gauge, Labels: le, Value: float64(e.Occupied)})
		emit(metrics.Sample{Name: "onair_edge_capacity_frames", Help: "Frames an edge holds at most.", Kind: metrics.Gauge, Labels: le, Value: float64(e.Capacity)})
		emit(metrics.Sample{Name: "onair_edge_drops_total", Help: "Frames a drop-policy edge refused.", Kind: metrics.Counter, Labels: le, Value: float64(e.Drops)})
	}
	for _, n := range rs.Nodes {
		if n.Panics > 0 { // only nodes that had one: a show has many nodes
			emit(metrics.Sample{Name: "onair_node_panics_total", Help: "Failures of a node that were panics in its work (stacks in the log); its group restarted.", Kind: metrics.Counter, Labels: l("node", n.ID), Value: float64(n.Panics)})
		}
	}
	emit(metrics.Sample{Name: "onair_panics_recovered_total", Help: "Panics the process recovered: each failed the node whose work it was (or was logged, where none owned it) instead of ending the process.", Kind: metrics.Counter, Value: float64(rs.Process.PanicsRecovered)})
	if ar := s.State.asRun.Status(); ar != nil {
		emit(metrics.Sample{Name: "onair_as_run_lines_total", Help: "Lines the as-run log wrote.", Kind: metrics.Counter, Value: float64(ar.Lines)})
		emit(metrics.Sample{Name: "onair_as_run_lines_lost_total", Help: "As-run lines not written (a failed write, such as a full disk, or a full queue); the show stays on air.", Kind: metrics.Counter, Value: float64(ar.Lost)})
	}
	emit(metrics.Sample{Name: "onair_process_threads", Help: "OS threads of the process (the process collector's process_* metrics have the rest).", Kind: metrics.Gauge, Value: float64(rs.Process.Threads)})
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// plural is n and the noun that goes with it.
func plural(n uint64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
