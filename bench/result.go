// Package bench measures a running show the way the seed articles did:
// process CPU and run-queue time, CPU by what the threads do (grouped by
// the plan's loops and its nodes' traits), Go's runtime, deadlines and
// drops per bus, the sources, the browser sources, page-locked memory and
// the device's readings; it renders a result as a table and compares two.
// `onair bench` drives it: start, warm up, Take, wait, Take, Since.
//
// bench reads /proc through runtime's reader only; it must never import
// lang/, compiler/ or a backend's package (it runs a show through
// show.Running).
package bench

import (
	"math"
	"strings"

	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// Result is what `onair bench` measures over its window.
type Result struct {
	Show      string  `json:"show"`
	Backend   string  `json:"backend"`
	Sources   int     `json:"sources"`
	Buses     int     `json:"buses"`
	FrameRate string  `json:"frame_rate"`
	WarmupS   float64 `json:"warmup_s"`
	WindowS   float64 `json:"window_s"`
	SwitchesS float64 `json:"switch_every_s,omitempty"`
	// Process CPU over the window, % of one core.
	CPUPercent    float64 `json:"cpu_percent"`
	UserPercent   float64 `json:"user_percent"`
	SystemPercent float64 `json:"system_percent"`
	Threads       int     `json:"threads"`
	// RunQueueMs is the time the process's threads spent runnable without
	// a CPU during the window (schedstat), summed; RunQueuePercent the
	// same in % of one core, as the seeds wrote it.
	RunQueueMs      float64 `json:"run_queue_ms"`
	RunQueuePercent float64 `json:"run_queue_percent"`
	// GroupCPU is % of one core by what the threads do (Groups: by the plan's loops and node traits);
	// GroupThreads the threads of each group at the end of the window.
	GroupCPU     map[string]float64 `json:"group_cpu_percent"`
	GroupThreads map[string]int     `json:"group_threads,omitempty"`
	// Go's runtime over the window (runtime/metrics): its GOMAXPROCS, the
	// garbage collections and the CPU it estimates they took (% of one
	// core; an estimate from its Ps' time, part of "other").
	GoMaxProcs   int     `json:"go_max_procs,omitempty"`
	GCCycles     uint64  `json:"gc_cycles"`
	GCCPUPercent float64 `json:"gc_cpu_percent"`
	// AllocBytesPerS is what Go's heap allocated a second over the window
	// (a show that allocates per frame shows up here before its GC does).
	AllocBytesPerS float64 `json:"alloc_bytes_per_s"`
	// Over every bus in the window; PerBus has them bus by bus.
	BusFrames      uint64 `json:"bus_frames"`
	MissedDeadline uint64 `json:"missed_deadlines"`
	Repeats        uint64 `json:"repeats"`
	Skipped        uint64 `json:"skipped"`
	OutputDrops    uint64 `json:"output_drops"`
	Switches       uint64 `json:"switches"`
	SwitchErrors   uint64 `json:"switch_errors,omitempty"`
	PerBus         []Bus  `json:"buses_detail"`
	SourceDrops    uint64 `json:"source_drops"`
	// Encoders are the ffmpeg outputs (delivery and raw ffmpeg) over the
	// window; EncoderDrops sums the frames their queues dropped (an
	// encoder that fell behind), which the bus's output drops do not count.
	Encoders     []Encoder `json:"encoders,omitempty"`
	EncoderDrops uint64    `json:"encoder_drops,omitempty"`
	Underruns    uint64    `json:"underruns"`
	// SoundLate sums the pictures that went on with silence because their
	// file's sound was not decoded yet (show.SourceSummary.SoundLate).
	SoundLate uint64 `json:"sound_late,omitempty"`
	// Page-locked host memory at the end of the window: what onair holds
	// through CUDA (cuMemHostAlloc, which /proc does not show) plus /proc's
	// VmLck and VmPin; LockedBytes is their sum.
	LockedBytes     int64 `json:"locked_host_bytes"`
	CUDALockedBytes int64 `json:"cuda_page_locked_bytes"`
	ProcLockedBytes int64 `json:"proc_locked_bytes"`
	RSSBytes        int64 `json:"rss_bytes"`
	// Device is the backend's last reading of its hardware (a GPU: NVML);
	// DeviceMean the mean of each of its numbers over the readings taken
	// once a second through the window.
	Device        any                `json:"device,omitempty"`
	DeviceMean    map[string]float64 `json:"device_mean,omitempty"`
	DeviceSamples int                `json:"device_samples,omitempty"`
	// Estimate is what the plan's estimates say this mix of sources can
	// grow to on the capacity profile.
	Estimate *Limit `json:"plan_estimate,omitempty"`
	// DecodePictures is what the backend's decode loops decoded over the
	// window; DecodeCPUUs, with ONAIR_NVDEC_CLOCKS set, their CPU µs a
	// picture by call (parse, decode within it, map, copy, status, unmap).
	DecodePictures int64              `json:"decode_pictures,omitempty"`
	DecodeCPUUs    map[string]float64 `json:"decode_cpu_us_per_picture,omitempty"`
	// Browser is the browser sources' counts over the window (nil for a
	// show without any).
	Browser *Browser `json:"browser,omitempty"`
	// Live is the live sources' counts over the window (nil for a show
	// without any).
	Live *Live `json:"live,omitempty"`
}

// Live is what a show's live sources (srt, udp, stream, rtmp) did over
// the window, all together: the frame synchroniser's corrections (a
// decoded frame dropped because its source ran ahead of the show's clock;
// a frame repeated, the pacer's underrun, because it ran behind), the
// on_error pictures shown while one was lost, and their transports'
// packet counts.
type Live struct {
	Sources     int    `json:"sources"`
	SyncDrops   uint64 `json:"frame_sync_drops"`
	Underruns   uint64 `json:"underruns"`
	ErrorFrames uint64 `json:"error_frames"`
	Packets     int64  `json:"packets"`
	Lost        int64  `json:"lost_packets"`
	Recovered   int64  `json:"recovered_packets"`
	Dropped     int64  `json:"dropped_packets"`
	Continuity  int64  `json:"continuity_errors"`
	NotLive     int    `json:"not_live"` // sources whose connection was not live at the end of the window
	// Latency: the end-to-end latency of the stamped frames (onair send's
	// stamps) that went on air in the window, over the sources that
	// reported one: Frames counted in the window; P50Ms, P99Ms and MaxMs
	// the slowest source's (each source's p50 and p99 are of its last
	// 1,024 frames, its max of the run).
	LatencyFrames int64   `json:"latency_frames,omitempty"`
	LatencyP50Ms  float64 `json:"latency_p50_ms,omitempty"`
	LatencyP99Ms  float64 `json:"latency_p99_ms,omitempty"`
	LatencyMaxMs  float64 `json:"latency_max_ms,omitempty"`
	ClockSkew     int64   `json:"latency_clock_skew,omitempty"`
}

// Browser is what a show's browser sources did over the window, all
// together: ImportsPerS is the seeds' churn figure, new buffers imported a
// second (0 once warm, with the return queue); an import is released when
// its buffer dies (the producer's pool destroyed it) or idles past the TTL.
type Browser struct {
	Sources        int     `json:"sources"`
	Frames         uint64  `json:"frames"`
	Converted      uint64  `json:"converted"`
	Imports        uint64  `json:"imports"`
	ImportsPerS    float64 `json:"imports_per_s"`
	ImportReleases uint64  `json:"import_releases"`
	ImportsLive    int64   `json:"imports_live"` // at the end of the window
	Dropped        uint64  `json:"dropped"`
}

// Encoder is one ffmpeg output over the window: the frames it took and
// dropped, its processes started again, its encoding speed at the end
// (1 keeps up) and its process's CPU in % of one core (-1: the process
// changed in the window, or could not be read).
type Encoder struct {
	Address    string  `json:"address"`
	Frames     uint64  `json:"frames"`
	Drops      uint64  `json:"drops"`
	Restarts   uint64  `json:"restarts"`
	Speed      float64 `json:"encode_speed"`
	CPUPercent float64 `json:"cpu_percent"`
}

// Bus is one bus over the window.
type Bus struct {
	Address     string            `json:"address"`
	Kind        string            `json:"kind"`
	Frames      uint64            `json:"frames"`
	Missed      uint64            `json:"missed_deadlines"`
	Repeats     uint64            `json:"repeats"`
	Skipped     uint64            `json:"skipped"`
	OutputDrops uint64            `json:"output_drops"`
	Switches    map[string]uint64 `json:"switches,omitempty"` // by transition: cut, fade, wipe
	MaxDrawMs   float64           `json:"max_draw_ms"`
}

// Limit is the plan's estimate of how far the show's mix of sources
// goes on its capacity profile: each budget scaled linearly with the
// sources (fixed costs such as the buses' canvases scale too, so this errs
// high by a little), and the first one to run out.
type Limit struct {
	Profile string `json:"profile"`
	// ProfileSources is the profile's source limit at the show's rate (an
	// estimate until measured: what the ramp measures).
	ProfileSources int         `json:"profile_sources,omitempty"`
	Budgets        []BudgetUse `json:"budgets"`
	Binding        string      `json:"binding,omitempty"`
	AllowsSources  int         `json:"allows_sources,omitempty"`
}

// BudgetUse is one budget of the plan and the sources of this mix it allows.
type BudgetUse struct {
	plan.Budget
	AllowsSources int `json:"allows_sources"`
}

// Estimate reads the plan's budgets: the resources scale with the
// sources; budgets counted in sources are the profile's source limits.
func Estimate(p *plan.Plan, sources int) *Limit {
	if p.Profile == "" || sources == 0 {
		return nil
	}
	l := &Limit{Profile: p.Profile}
	for _, b := range p.Estimates.Budgets {
		switch {
		case b.Unit == "sources":
			if strings.HasPrefix(b.Name, "sources at") {
				l.ProfileSources = int(b.Limit)
			}
			continue
		case b.Used <= 0 || b.Limit <= 0:
			continue
		}
		u := BudgetUse{Budget: b, AllowsSources: int(math.Floor(float64(sources) * b.Limit / b.Used))}
		l.Budgets = append(l.Budgets, u)
		if l.Binding == "" || u.AllowsSources < l.AllowsSources {
			l.Binding, l.AllowsSources = b.Name, u.AllowsSources
		}
	}
	return l
}

func (b Snapshot) Since(a Snapshot) Result {
	d := b.at.Sub(a.at)
	pct := func(ns int64) float64 { return 100 * float64(ns) / float64(d.Nanoseconds()) }
	r := Result{WindowS: d.Seconds(), GroupCPU: map[string]float64{},
		UserPercent:   pct(int64(b.usage.User - a.usage.User)),
		SystemPercent: pct(int64(b.usage.System - a.usage.System)),
		Threads:       b.usage.Threads, RSSBytes: b.usage.RSSBytes,
		CUDALockedBytes: b.cudaLocked, ProcLockedBytes: b.procLocked, LockedBytes: b.cudaLocked + b.procLocked,
		RunQueueMs: float64(b.queue-a.queue) / 1e6, RunQueuePercent: pct(b.queue - a.queue), Device: b.status.Device,
	}
	r.CPUPercent = r.UserPercent + r.SystemPercent
	for g, v := range b.groups {
		r.GroupCPU[g] = pct(v - a.groups[g])
	}
	r.GroupThreads = b.threads
	r.GoMaxProcs, r.GCCycles = b.gc.maxProcs, b.gc.cycles-a.gc.cycles
	r.GCCPUPercent = 100 * (b.gc.cpuSeconds - a.gc.cpuSeconds) / d.Seconds()
	r.AllocBytesPerS = float64(b.gc.allocBytes-a.gc.allocBytes) / d.Seconds()
	if n := b.decode["pictures"] - a.decode["pictures"]; n > 0 {
		r.DecodePictures = n
		for _, k := range []string{"parse", "decode", "map", "copy", "status", "unmap"} {
			if ns := b.decode[k+"_ns"] - a.decode[k+"_ns"]; ns > 0 {
				if r.DecodeCPUUs == nil {
					r.DecodeCPUUs = map[string]float64{}
				}
				r.DecodeCPUUs[k] = float64(ns) / float64(n) / 1e3
			}
		}
	}
	busA := map[string]show.BusSummary{}
	for _, x := range a.sum.Buses {
		busA[x.Address] = x
	}
	for _, x := range b.sum.Buses {
		y := busA[x.Address]
		bb := Bus{Address: x.Address, Kind: x.Kind, Frames: x.Ticks - y.Ticks, Missed: x.Missed - y.Missed,
			Repeats: x.Repeats - y.Repeats, Skipped: x.Skipped - y.Skipped, OutputDrops: x.OutputDrops - y.OutputDrops,
			MaxDrawMs: x.Timing.MaxDrawMs}
		for k, n := range x.SwitchesByKind {
			if n > y.SwitchesByKind[k] {
				if bb.Switches == nil {
					bb.Switches = map[string]uint64{}
				}
				bb.Switches[k] = n - y.SwitchesByKind[k]
			}
		}
		r.PerBus = append(r.PerBus, bb)
		r.BusFrames += bb.Frames
		r.MissedDeadline += bb.Missed
		r.Repeats += bb.Repeats
		r.Skipped += bb.Skipped
		r.OutputDrops += bb.OutputDrops
		r.Switches += x.Switches - y.Switches
	}
	r.encoders(a, b)
	srcA := map[string]show.SourceSummary{}
	for _, x := range a.sum.Sources {
		srcA[x.Address] = x
	}
	for _, x := range b.sum.Sources {
		y := srcA[x.Address]
		r.SourceDrops += x.Drops - y.Drops
		r.Underruns += x.Underruns - y.Underruns
		r.SoundLate += x.SoundLate - y.SoundLate
		if x.Live != nil {
			r.addLive(x, y)
		}
		if x.Browser == nil {
			continue
		}
		if r.Browser == nil {
			r.Browser = &Browser{}
		}
		var was show.BrowserSummary
		if y.Browser != nil {
			was = *y.Browser
		}
		bb := r.Browser
		bb.Sources++
		bb.Frames += x.Browser.Frames - was.Frames
		bb.Converted += x.Browser.Converted - was.Converted
		bb.Imports += x.Browser.Imports - was.Imports
		bb.ImportReleases += x.Browser.ImportReleases - was.ImportReleases
		bb.ImportsLive += x.Browser.ImportsLive
		bb.Dropped += x.Browser.Dropped - was.Dropped
	}
	r.Sources = len(b.sum.Sources)
	if r.Browser != nil {
		r.Browser.ImportsPerS = float64(r.Browser.Imports) / b.at.Sub(a.at).Seconds()
	}
	return r
}

// encoders fills in the ffmpeg outputs' figures between snapshots a and b.
func (r *Result) encoders(a, b Snapshot) {
	outA := map[string]show.OutputSummary{}
	for _, x := range a.sum.Outputs {
		outA[x.Address] = x
	}
	for _, x := range b.sum.Outputs {
		if x.State == "" {
			continue // not an ffmpeg output
		}
		y := outA[x.Address]
		e := Encoder{Address: x.Address, Frames: x.Written - y.Written, Drops: x.Drops - y.Drops, Restarts: x.Restarts - y.Restarts, Speed: x.EncodeSpeed, CPUPercent: -1}
		if was, ok := a.encoderCPU[x.PID]; ok && x.PID == y.PID {
			e.CPUPercent = 100 * float64(b.encoderCPU[x.PID]-was) / float64(b.at.Sub(a.at).Nanoseconds())
		}
		r.Encoders = append(r.Encoders, e)
		r.EncoderDrops += e.Drops
	}
}

// Describe fills in what the plan says of the show measured: its name,
// rate, buses (its compositors) and the plan's estimate for its sources
// (Since counted them).
func (r *Result) Describe(p *plan.Plan) {
	r.Show, r.FrameRate = p.Show, p.FrameRate.String()
	r.Buses = 0
	for _, n := range p.Nodes {
		if k, ok := nodes.Lookup(n.Kind); ok && k.Has(nodes.Compositor) {
			r.Buses++
		}
	}
	r.Estimate = Estimate(p, r.Sources)
}

// addLive counts live source x's window (y: the same at its start).
func (r *Result) addLive(x, y show.SourceSummary) {
	if r.Live == nil {
		r.Live = &Live{}
	}
	var was show.LiveSummary
	if y.Live != nil {
		was = *y.Live
	}
	l, now := r.Live, x.Live
	l.Sources++
	l.SyncDrops += now.SyncDrops - was.SyncDrops
	l.Underruns += x.Underruns - y.Underruns
	l.ErrorFrames += now.ErrorFrames - was.ErrorFrames
	l.Packets += now.Packets - was.Packets
	l.Lost += now.Lost - was.Lost
	l.Recovered += now.Recovered - was.Recovered
	l.Dropped += now.Dropped - was.Dropped
	l.Continuity += now.Continuity - was.Continuity
	if now.State != "live" {
		l.NotLive++
	}
	if lat := now.Latency; lat != nil {
		var before int64
		if was.Latency != nil {
			before = was.Latency.Frames
			l.ClockSkew -= was.Latency.ClockSkew
		}
		l.LatencyFrames += lat.Frames - before
		l.ClockSkew += lat.ClockSkew
		l.LatencyP99Ms = max(l.LatencyP99Ms, lat.P99Ms)
		l.LatencyMaxMs = max(l.LatencyMaxMs, lat.MaxMs)
		l.LatencyP50Ms = max(l.LatencyP50Ms, lat.P50Ms)
	}
}
