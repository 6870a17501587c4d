package runtime

// Status: what the runtime is doing, per loop, edge, node and thread.
//
// Invariants:
//   - Every type here marshals to JSON as is; the HTTP server that serves it
//     lives elsewhere.
//   - Thread figures come from /proc/self/task/*/stat (utime, stime in clock
//     ticks of 1/100 s, the Linux default) and schedstat (time on a CPU and
//     time runnable without one, in ns). A thread that exits between the
//     listing and the read is skipped, not an error.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/onairhq/onair/internal/panics"
)

// clockTick is the kernel's USER_HZ: /proc reports utime/stime in it.
const clockTick = 100

// ThreadStatus is one OS thread of the process.
type ThreadStatus struct {
	Tid  int    `json:"tid"`
	Name string `json:"name"` // comm: loop threads are "onair-<loop>"
	// CPUNs is user+system time (from stat, 10 ms resolution).
	CPUNs int64 `json:"cpu_ns"`
	// RunNs is time on a CPU and RunQueueNs time runnable without one
	// (schedstat, ns).
	RunNs      int64  `json:"run_ns"`
	RunQueueNs int64  `json:"run_queue_ns"`
	Slices     uint64 `json:"slices"`
}

// ProcessStatus is the whole process.
type ProcessStatus struct {
	Threads int   `json:"threads"`
	CPUNs   int64 `json:"cpu_ns"` // user+system since start (getrusage)
	// CPUPercent is % of one core since the previous Status (or since the
	// sampler was made).
	CPUPercent float64 `json:"cpu_percent"`
	RSSBytes   int64   `json:"rss_bytes"`
	// PanicsRecovered counts the panics the process recovered (package
	// panics): each failed the node whose work it was, or was logged where
	// no node owned it; none ended the process.
	PanicsRecovered uint64 `json:"panics_recovered"`
}

// ReadThread reads one thread's figures.
func ReadThread(tid int) (ThreadStatus, error) {
	ts := ThreadStatus{Tid: tid}
	base := "/proc/self/task/" + strconv.Itoa(tid)
	var err error
	if ts.Name, ts.CPUNs, err = readStat(base + "/stat"); err != nil {
		return ts, fmt.Errorf("thread %d: %w", tid, err)
	}
	if sch, err := os.ReadFile(base + "/schedstat"); err == nil {
		g := strings.Fields(string(sch))
		if len(g) >= 3 {
			ts.RunNs, _ = strconv.ParseInt(g[0], 10, 64)
			ts.RunQueueNs, _ = strconv.ParseInt(g[1], 10, 64)
			ts.Slices, _ = strconv.ParseUint(g[2], 10, 64)
		}
	}
	return ts, nil
}

// ReadProcessCPU is the CPU (user + system) process pid has used so far:
// another process's, such as an output's ffmpeg.
func ReadProcessCPU(pid int) (time.Duration, error) {
	_, ns, err := readStat("/proc/" + strconv.Itoa(pid) + "/stat")
	return time.Duration(ns), err
}

// readStat reads a /proc stat file: the name and utime + stime in ns.
func readStat(path string) (name string, cpuNs int64, err error) {
	stat, err := os.ReadFile(path)
	if err != nil {
		return "", 0, err
	}
	s := string(stat)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return "", 0, fmt.Errorf("unexpected %s format", path)
	}
	f := strings.Fields(s[close+1:])
	// after the name: state(0) ppid(1) ... utime(11) stime(12)
	if len(f) > 12 {
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		cpuNs = (ut + st) * (1_000_000_000 / clockTick)
	}
	return s[open+1 : close], cpuNs, nil
}

// ReadThreads reads every thread of the process.
func ReadThreads() ([]ThreadStatus, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, fmt.Errorf("listing threads: %w (is /proc mounted?)", err)
	}
	out := make([]ThreadStatus, 0, len(ents))
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ts, err := ReadThread(tid); err == nil {
			out = append(out, ts)
		}
	}
	return out, nil
}

// CPUSampler turns process CPU time into a percentage between samples.
type CPUSampler struct {
	mu     sync.Mutex
	lastAt int64
	lastNs int64
}

// NewCPUSampler starts sampling now.
func NewCPUSampler() *CPUSampler {
	s := &CPUSampler{}
	s.lastAt, s.lastNs = Now(), processCPUNs()
	return s
}

func processCPUNs() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// Sample reads the process: CPU % of one core since the previous sample,
// thread count and resident memory.
func (s *CPUSampler) Sample() ProcessStatus {
	now, cpu := Now(), processCPUNs()
	s.mu.Lock()
	var pct float64
	if d := now - s.lastAt; d > 0 {
		pct = 100 * float64(cpu-s.lastNs) / float64(d)
	}
	s.lastAt, s.lastNs = now, cpu
	s.mu.Unlock()
	ps := ProcessStatus{CPUNs: cpu, CPUPercent: pct, PanicsRecovered: panics.Recovered()}
	if ents, err := os.ReadDir("/proc/self/task"); err == nil {
		ps.Threads = len(ents)
	}
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			pages, _ := strconv.ParseInt(f[1], 10, 64)
			ps.RSSBytes = pages * int64(os.Getpagesize())
		}
	}
	return ps
}

// LoopStatus is a loop's counters and its thread's CPU.
type LoopStatus struct {
	LoopStats
	Thread ThreadStatus `json:"thread"`
}

// LoopStatusOf reads a loop and its thread.
func LoopStatusOf(l *EventLoop) LoopStatus {
	ls := LoopStatus{LoopStats: l.Stats()}
	if tid := l.Tid(); tid > 0 {
		ls.Thread, _ = ReadThread(tid)
	}
	return ls
}

// NodeStatus is one node.
type NodeStatus struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Group     string `json:"group"`
	Loop      string `json:"loop,omitempty"`
	Thread    bool   `json:"thread,omitempty"`
	State     string `json:"state"` // starting | running | restarting | stopped | failed
	Restarts  uint64 `json:"restarts"`
	FramesIn  uint64 `json:"frames_in"`
	FramesOut uint64 `json:"frames_out"`
	Drops     uint64 `json:"drops"`
	Errors    uint64 `json:"errors"`
	// Panics counts the node's failures that were panics in its work
	// (their stacks are in the log).
	Panics    uint64 `json:"panics"`
	LastError string `json:"last_error,omitempty"`
	// Threads are the node's own threads (ctx.Go), with their CPU.
	Threads []ThreadStatus `json:"threads,omitempty"`
}

// GroupStatus is one node group.
type GroupStatus struct {
	Name  string `json:"name"`
	Order int    `json:"order"`
	State string `json:"state"`
	Ready bool   `json:"ready"`
	// ReadyMs is how long the group took to be ready at the show's
	// start: from starting its nodes to every edge leaving it having
	// carried a frame (its readiness).
	ReadyMs float64 `json:"ready_ms"`
	// Wave is the start wave the group began in: the groups of a wave
	// start together (a few at a time), each wave once the one before is
	// ready; WaveReadyMs is from its wave's start to the group ready, so a
	// wave's slowest is how long the show's start waited for it.
	Wave        int     `json:"wave"`
	WaveReadyMs float64 `json:"wave_ready_ms"`
	Restarts    uint64  `json:"restarts"`
}

// Status is the whole runtime: what Executor.Status returns.
type Status struct {
	Show    string         `json:"show"`
	Uptime  int64          `json:"uptime_ns"`
	Process ProcessStatus  `json:"process"`
	Loops   []LoopStatus   `json:"loops"`
	Groups  []GroupStatus  `json:"groups"`
	Nodes   []NodeStatus   `json:"nodes"`
	Edges   []EdgeStats    `json:"edges"`
	Threads []ThreadStatus `json:"threads"`
}

// ThreadName is the name (comm) of the thread that runs the loop named
// loop; a backend that runs a plan's loop on a thread of its own names it
// the same, so a thread is known by the plan's loop it runs.
func ThreadName(loop string) string { return "onair-" + loop }

// Usage is the CPU the process has used (getrusage), and its threads and
// resident memory, at one moment.
type Usage struct {
	User, System time.Duration
	Threads      int
	RSSBytes     int64
	// LockedBytes is the page-locked memory /proc knows of (VmLck and
	// VmPin of /proc/self/status): mlock and pinned pages, not what a GPU
	// driver page-locks through its own calls.
	LockedBytes int64
}

// ReadUsage reads the process's usage now.
func ReadUsage() Usage {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	u := Usage{User: time.Duration(ru.Utime.Nano()), System: time.Duration(ru.Stime.Nano())}
	if ents, err := os.ReadDir("/proc/self/task"); err == nil {
		u.Threads = len(ents)
	}
	u.RSSBytes = int64(ru.Maxrss) * 1024
	u.LockedBytes = readLocked()
	return u
}

// readLocked sums VmLck and VmPin of /proc/self/status, in bytes.
func readLocked() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	var n int64
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "VmLck:" || f[0] == "VmPin:") {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			n += kb * 1024
		}
	}
	return n
}

// Since renders what the process used between then and u, over wall time
// d: "Process: 12.3 % of one core (user 9.1 %, system 3.2 %) over 30s, 23
// threads, 45 MB peak resident".
func (u Usage) Since(then Usage, d time.Duration) string {
	pct := func(x time.Duration) float64 {
		if d <= 0 {
			return 0
		}
		return 100 * float64(x) / float64(d)
	}
	user, sys := u.User-then.User, u.System-then.System
	return fmt.Sprintf("Process: %.1f %% of one core (user %.1f %%, system %.1f %%) over %v on air, %d threads, %.0f MB peak resident",
		pct(user+sys), pct(user), pct(sys), d.Round(time.Millisecond), u.Threads, float64(u.RSSBytes)/1e6)
}
