package runtime

import (
	"fmt"
	"math/rand"
	"sort"
	"sync/atomic"
	"testing"
	"time"
)

func loopCPU(b *testing.B, l *EventLoop) int64 {
	ts, err := ReadThread(l.Tid())
	if err != nil {
		b.Fatalf("reading loop %s's thread: %v", l.Name(), err)
	}
	return ts.RunNs
}

// BenchmarkLoopHandler200: 200 sources' signals watched on one loop; each
// handler re-arms its one-shot wait. "burst": all 200 fire together, one
// epoll_wait returns many; "spread": one at a time, a wake-up per handler.
// loop-ns/handler is the loop thread's CPU (schedstat) per handler run,
// epoll_wait and re-arm included.
func BenchmarkLoopHandler200(b *testing.B) {
	for _, mode := range []string{"burst", "spread"} {
		b.Run(mode, func(b *testing.B) {
			l, err := NewEventLoop("bench")
			if err != nil {
				b.Fatal(err)
			}
			defer l.Stop()
			const n = 200
			round, _ := NewSignal()
			defer round.Close()
			var handled atomic.Int64
			var target atomic.Int64
			sigs := make([]*Signal, n)
			for i := range sigs {
				sigs[i], _ = NewSignal()
				defer sigs[i].Close()
				r, err := l.Watch(sigs[i], func(r *Registration) {
					r.Rearm()
					if handled.Add(1) == target.Load() {
						round.Notify()
					}
				})
				if err != nil {
					b.Fatal(err)
				}
				defer r.Unregister()
			}
			b.ResetTimer()
			cpu0, h0 := loopCPU(b, l), l.Stats().Handlers
			for done := 0; done < b.N; {
				k := n
				if mode == "spread" {
					k = 1
				}
				target.Store(handled.Load() + int64(k))
				for j := 0; j < k; j++ {
					sigs[(done+j)%n].Notify()
				}
				round.Wait(func() bool { return handled.Load() >= target.Load() }, -1)
				done += k
			}
			b.StopTimer()
			cpu, h := loopCPU(b, l)-cpu0, l.Stats().Handlers-h0
			b.ReportMetric(float64(cpu)/float64(h), "loop-ns/handler")
		})
	}
}

// paceShow runs sources at 30 fps over loops pacing loops (source i on
// pacing_{i % loops}, random phases), each fanning its frame out from the
// loop to two Program compositors (block edges of 3), which look for frames
// every 8 ms through a MultiWait. No pixels. It measures for d after a
// warm-up and reports per-loop wake-ups, CPU and the pacing jitter.
func paceShow(b *testing.B, sources, loops int, grid bool, d time.Duration) {
	ls := make([]*EventLoop, loops)
	for i := range ls {
		l, err := NewEventLoop(fmt.Sprintf("pacing_%d", i))
		if err != nil {
			b.Fatal(err)
		}
		ls[i] = l
	}
	var edges [2][]*Edge[*tframe]
	for c := range edges {
		for i := 0; i < sources; i++ {
			e, err := NewEdge[*tframe](EdgeConfig{From: fmt.Sprintf("s%d", i), To: fmt.Sprintf("pgm%d", c), Capacity: 3, Policy: Block})
			if err != nil {
				b.Fatal(err)
			}
			edges[c] = append(edges[c], e)
		}
	}
	// Two compositors, looking every 8 ms at the inputs that signalled
	// (a ReadySet: one signal for all 192 inputs).
	stop := make(chan struct{})
	compDone := make(chan struct{}, 2)
	var taken atomic.Int64
	var compWrites [2]func() uint64
	for c := range edges {
		set, err := NewReadySet(sources)
		if err != nil {
			b.Fatal(err)
		}
		for i, e := range edges[c] {
			e.Attach(set, i)
		}
		compWrites[c] = set.Signal().Writes
		mw, err := NewMultiWait(set.Signal())
		if err != nil {
			b.Fatal(err)
		}
		go func(in []*Edge[*tframe]) {
			defer func() { mw.Close(); compDone <- struct{}{} }()
			var ready []int
			for {
				select {
				case <-stop:
					return
				default:
				}
				mw.Wait(Now() + int64(8*time.Millisecond))
				ready = set.Take(ready[:0])
				for _, i := range ready {
					for {
						if _, ok := in[i].Get(); !ok {
							break
						}
						taken.Add(1)
					}
				}
				time.Sleep(8 * time.Millisecond)
			}
		}(edges[c])
	}
	// Sources: jitter samples per loop, appended on that loop's thread.
	jitter := make([][]int64, loops)
	measuring := atomic.Bool{}
	rng := rand.New(rand.NewSource(7))
	gridOrigin := Now()
	pacings := make([]*Pacing, sources)
	var blocked atomic.Int64
	for i := 0; i < sources; i++ {
		li := i % loops
		l := ls[li]
		cfg := PacerConfig{TimeBase: Base120k}
		if grid {
			cfg.AlignPeriod, cfg.AlignOriginNs = TimeBase{1, 30}, gridOrigin
		}
		p, _ := NewPacer(cfg)
		phase := rng.Int63n(33_333_333)
		i := i
		l.Do(func() {
			p.Release(0)
			if !grid {
				p.originNs += phase // sources that started at random moments
			}
			var g *Pacing
			g = p.Run(l, 1, func(pts int64) (int64, bool) { return pts + 4000, true }, func(pts int64) {
				if measuring.Load() {
					jitter[li] = append(jitter[li], Now()-g.Release())
				}
				f := &tframe{seq: pts / 4000, pts: pts}
				for c := range edges {
					if ok, _ := edges[c][i].TryPut(f); !ok {
						blocked.Add(1)
					}
				}
			})
			pacings[i] = g
		})
	}
	time.Sleep(500 * time.Millisecond) // warm-up
	cpu0 := make([]int64, loops)
	w0 := make([]uint64, loops)
	for i, l := range ls {
		l.Do(func() { jitter[i] = jitter[i][:0] })
		cpu0[i], w0[i] = loopCPU(b, l), l.Stats().Wakeups
	}
	sampler := NewCPUSampler()
	cw0 := compWrites[0]() + compWrites[1]()
	t0 := Now()
	measuring.Store(true)
	time.Sleep(d)
	measuring.Store(false)
	el := float64(Now() - t0)
	proc := sampler.Sample()
	cw := compWrites[0]() + compWrites[1]() - cw0
	var cpuSum, cpuMax, wakeSum float64
	var all []int64
	for i, l := range ls {
		cpu := float64(loopCPU(b, l)-cpu0[i]) / el * 100
		wake := float64(l.Stats().Wakeups-w0[i]) / (el / 1e9)
		cpuSum += cpu
		wakeSum += wake
		if cpu > cpuMax {
			cpuMax = cpu
		}
		l.Do(func() { all = append(all, jitter[i]...) })
	}
	for i, l := range ls {
		for j := i; j < sources; j += loops {
			g := pacings[j]
			l.Do(g.Stop)
		}
	}
	close(stop)
	<-compDone
	<-compDone
	for _, l := range ls {
		l.Stop()
	}
	for c := range edges {
		for _, e := range edges[c] {
			e.Release()
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	q := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[int(p*float64(len(all)-1))]) / 1e3
	}
	b.ReportMetric(wakeSum/float64(loops), "wakeups/s/loop")
	b.ReportMetric(cpuSum/float64(loops), "cpu%/loop")
	b.ReportMetric(cpuMax, "cpu%-busiest-loop")
	b.ReportMetric(cpuSum, "cpu%-all-loops")
	b.ReportMetric(proc.CPUPercent, "cpu%-process")
	b.ReportMetric(q(0.50), "jitter-p50-µs")
	b.ReportMetric(q(0.99), "jitter-p99-µs")
	b.ReportMetric(float64(len(all))/(el/1e9), "frames/s")
	b.ReportMetric(float64(blocked.Load()), "blocked-puts")
	b.ReportMetric(float64(cw)/2/(el/1e9), "signal-writes/s/compositor")
}

// BenchmarkPacing192: 192 sources at 30 fps, fan-out on the loops, over 4
// loops and over 1 (the seeds' sharding question); phase=random anchors each
// source where it started (the seeds' case: a wake-up per source), phase=grid
// on the show's ticks (a wake-up per tick). Runs 3 s per case; use
// -benchtime=1x.
func BenchmarkPacing192(b *testing.B) {
	for _, loops := range []int{4, 1} {
		for _, grid := range []bool{false, true} {
			phase := "random"
			if grid {
				phase = "grid"
			}
			b.Run(fmt.Sprintf("loops=%d/phase=%s", loops, phase), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					paceShow(b, 192, loops, grid, 3*time.Second)
				}
			})
		}
	}
}

// BenchmarkPacingJitter30fps: release time minus due time at 30 fps, 8
// sources on one loop, 3 s.
func BenchmarkPacingJitter30fps(b *testing.B) {
	for i := 0; i < b.N; i++ {
		paceShow(b, 8, 1, false, 3*time.Second)
	}
}
