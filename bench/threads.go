package bench

import (
	"runtime/metrics"
	"strings"
	"time"

	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/browser"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

// The groups the bench adds CPU into, as the seeds' per-thread readings
// did: a loop's thread by what the plan runs on the loop, a node's own
// threads by its kind's traits, and the threads neither claims by their
// owner (unclaimed).
const (
	groupSources     = "sources" // readers, uploads, importers, fan-outs on threads of their own
	groupDecode      = "decode"  // decoders on threads of their own, and decode loops
	groupPacing      = "pacing loops"
	groupDefault     = "default loop" // AUX compositors, AUX and wipe pacing: loops that pace no source
	groupLoops       = "other loops"
	groupCompositors = "compositors"  // Program compositors on threads of their own
	groupOutputs     = "outputs"      // outputs on threads of their own
	groupOutputsLoop = "outputs loop" // the loop-driven outputs (null)
	groupDriver      = "cuda driver"  // the driver's own threads (cuda-EvtHandlr, ...)
	groupOther       = "other"        // Go's runtime, GC, reader pools, the status server
)

// Groups says which group each of a plan's loops, and each of its nodes'
// own threads, adds into.
type Groups struct {
	loops map[string]string // loop name: group
}

// GroupsOf reads the plan's loops: a loop with a decoder on it (or that
// its backend runs, a Kind) decodes; one that paces sources is a pacing
// loop; one that runs only sinks is the outputs loop; one with a
// compositor or a pacer but no source of its own is the default loop.
func GroupsOf(p *plan.Plan) Groups {
	kind := map[string]string{}
	for _, n := range p.Nodes {
		kind[n.ID] = n.Kind
	}
	g := Groups{loops: map[string]string{}}
	for _, l := range p.Loops {
		var some, all nodes.Role
		all = ^nodes.Role(0)
		for _, id := range l.Nodes {
			var r nodes.Role
			if k, ok := nodes.Lookup(kind[id]); ok {
				r = k.Traits.Roles
			}
			some |= r
			all &= r
		}
		switch {
		case l.Kind != "" || some.Has(nodes.Decoder):
			g.loops[l.Name] = groupDecode
		case len(l.Sources) > 0:
			g.loops[l.Name] = groupPacing
		case len(l.Nodes) > 0 && all.Has(nodes.Sink):
			g.loops[l.Name] = groupOutputsLoop
		case some.Has(nodes.Compositor), some.Has(nodes.Pacer):
			g.loops[l.Name] = groupDefault
		default:
			g.loops[l.Name] = groupLoops
		}
	}
	return g
}

// loop is the group of the loop named name; a loop the plan does not
// have is "other loops".
func (g Groups) loop(name string) string {
	if x, ok := g.loops[name]; ok {
		return x
	}
	return groupLoops
}

// node is the group of a node's own threads, by its kind's traits.
func (Groups) node(kind string) string {
	k, ok := nodes.Lookup(kind)
	switch {
	case !ok:
		return groupSources
	case k.Has(nodes.Compositor):
		return groupCompositors
	case k.Has(nodes.Sink):
		return groupOutputs
	case k.Has(nodes.Decoder):
		return groupDecode
	}
	return groupSources
}

// unclaimed is the group of a thread no loop or node of the runtime
// claims: a plan's loop that its backend runs on a thread of its own
// (named runtime.ThreadName of the loop), the threads an owner outside
// the plan names (the browser sources' shared receiver, a decoder's own
// decode loop, the CUDA driver's threads), or Go's own.
func (g Groups) unclaimed(comm string) string {
	for name, group := range g.loops {
		if comm == runtime.ThreadName(name) {
			return group
		}
	}
	switch {
	case comm == browser.PollerThread:
		return groupSources
	case comm == runtime.ThreadName("nvdec"): // a decoder's own decode loop (nodes/cuda)
		return groupDecode
	case strings.HasPrefix(comm, "cuda"): // the driver's (cuda-EvtHandlr, cuda-EvtHandlr...)
		return groupDriver
	}
	return groupOther
}

// Snapshot is one reading of the running show.
type Snapshot struct {
	at                     time.Time
	usage                  runtime.Usage
	sum                    show.Summary
	status                 show.StatusReport
	groups                 map[string]int64 // CPU ns by group
	threads                map[string]int   // threads by group
	gc                     goStats
	queue                  int64 // run-queue ns, all threads
	cudaLocked, procLocked int64
	decode                 map[string]int64 // the decode loops' counters (decodeCounter)
	encoderCPU             map[int]int64    // each running ffmpeg output's CPU ns, by PID
}

// decodeCounter is a device report that counts its decode loops' pictures
// and CPU (the CUDA backend's GPUStatus).
type decodeCounter interface{ DecodeCounters() map[string]int64 }

// PageLocker is a device report that knows the host memory the backend
// page-locked (the CUDA backend's GPUStatus).
type PageLocker interface{ PageLocked() int64 }

// Take reads the running show now, its threads grouped by g.
func Take(r show.Running, g Groups) Snapshot {
	s := Snapshot{at: time.Now(), usage: runtime.ReadUsage(), sum: r.Summary(), groups: map[string]int64{}, threads: map[string]int{}, gc: readGoStats()}
	s.status, _ = r.Status().(show.StatusReport)
	rs := s.status.Runtime
	claimed := map[int]bool{}
	for _, l := range rs.Loops {
		s.groups[g.loop(l.Name)] += l.Thread.CPUNs
		if !claimed[l.Thread.Tid] {
			s.threads[g.loop(l.Name)]++
		}
		claimed[l.Thread.Tid] = true
	}
	for _, n := range rs.Nodes {
		ng := g.node(n.Kind)
		for _, t := range n.Threads {
			s.groups[ng] += t.CPUNs
			if !claimed[t.Tid] {
				s.threads[ng]++
			}
			claimed[t.Tid] = true
		}
	}
	for _, o := range s.sum.Outputs {
		if o.PID > 0 {
			if cpu, err := runtime.ReadProcessCPU(o.PID); err == nil {
				if s.encoderCPU == nil {
					s.encoderCPU = map[int]int64{}
				}
				s.encoderCPU[o.PID] = cpu.Nanoseconds()
			}
		}
	}
	for _, t := range rs.Threads {
		s.queue += t.RunQueueNs
		if !claimed[t.Tid] {
			s.groups[g.unclaimed(t.Name)] += t.CPUNs
			s.threads[g.unclaimed(t.Name)]++
		}
	}
	if pl, ok := s.status.Device.(PageLocker); ok {
		s.cudaLocked = pl.PageLocked()
	}
	if dc, ok := s.status.Device.(decodeCounter); ok {
		s.decode = dc.DecodeCounters()
	}
	s.procLocked = s.usage.LockedBytes
	return s
}

// goStats is what Go's runtime says of itself (runtime/metrics).
type goStats struct {
	maxProcs   int
	cycles     uint64
	cpuSeconds float64 // GC's CPU, Go's estimate
	allocBytes uint64  // allocated on the heap since the start
}

func readGoStats() goStats {
	m := []metrics.Sample{{Name: "/sched/gomaxprocs:threads"}, {Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(m)
	var g goStats
	if m[0].Value.Kind() == metrics.KindUint64 {
		g.maxProcs = int(m[0].Value.Uint64())
	}
	if m[1].Value.Kind() == metrics.KindUint64 {
		g.cycles = m[1].Value.Uint64()
	}
	if m[2].Value.Kind() == metrics.KindFloat64 {
		g.cpuSeconds = m[2].Value.Float64()
	}
	if m[3].Value.Kind() == metrics.KindUint64 {
		g.allocBytes = m[3].Value.Uint64()
	}
	return g
}
