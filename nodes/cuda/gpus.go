package cuda

// A show over several GPUs (canvas gpus above 1) runs each node on the GPU
// its plan placement names (Placement.GPU): one backend per GPU, each with
// its context and what hangs off it (NVDEC, decode loops, reader threads,
// downloads), the first the run's own. A node's constructor runs on its
// GPU's backend, so its pools, streams, decoders and importers live there;
// a bus draws on its GPU's context. A frame a bus draws from another GPU
// (an edge the plan marks cross_gpu) is copied into a frame of the bus's
// GPU by a cuda.Peer (cuMemcpyPeerAsync), once for each frame and GPU
// (a tick's, however many buses there draw it; a repeated frame is not
// copied again), counted in /status and /metrics. With ONAIR_GPU_STANDIN=1 the GPUs after the first are
// contexts of onair's own on GPU 0 (cuda.NewOwnContext): the same code,
// every path of it, on a host of one GPU. A show on one GPU has no second
// backend and no copies: it runs as it always did.

import (
	"fmt"
	"maps"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/metrics"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

// StandInEnv, set to 1, runs a show placed on several GPUs on GPU 0 alone:
// each GPU after the first is a context of onair's own there.
const StandInEnv = "ONAIR_GPU_STANDIN"

// openContexts opens a context for each of the show's n GPUs: device i's
// primary context, or with StandInEnv set a context of onair's own on
// device 0 for every GPU after the first.
func openContexts(n int) (ctxs []*gpu.Context, standIn bool, err error) {
	standIn = n > 1 && os.Getenv(StandInEnv) == "1"
	for i := range max(n, 1) {
		var c *gpu.Context
		switch {
		case i == 0:
			c, err = gpu.NewContext(gpu.SchedBlockingSync)
		case standIn:
			c, err = gpu.NewOwnContext(0, gpu.SchedBlockingSync)
		default:
			if c, err = gpu.NewContextOn(i, gpu.SchedBlockingSync); err != nil {
				err = fmt.Errorf("%w (the plan places nodes on %d GPUs, canvas gpus: compile for the GPUs this host has, or set %s=1 to run them as contexts on GPU 0)", err, n, StandInEnv)
			}
		}
		if err != nil {
			for _, o := range ctxs {
				o.Close()
			}
			return nil, false, err
		}
		ctxs = append(ctxs, c)
	}
	return ctxs, standIn, nil
}

// spread gives b (GPU 0's backend) a backend for each further context:
// b.devs[i] runs the nodes placed on GPU i. Nothing on one context.
func (b *backend) spread(ctxs []*gpu.Context) {
	if len(ctxs) < 2 {
		return
	}
	b.devs = []*backend{b}
	for i, c := range ctxs[1:] {
		d := newBackend(c)
		d.log, d.gpuIndex = b.log.With("gpu", i+1), i+1
		b.devs = append(b.devs, d)
	}
	b.cross = &crossings{devs: b.devs, peers: map[[2]int]*gpu.Peer{}, since: map[[2]int]time.Time{}, pools: map[crossPool]*gpu.FramePool{}, last: map[crossKey]lastCopy{}}
	for _, d := range b.devs {
		d.cross = b.cross
	}
}

// onGPUs makes sb, GPU 0's show backend, run each node on its GPU's
// backend: the kinds' constructors, the canvases and the downloads go to
// the backend of the node's (or the frame's) GPU.
func (b *backend) onGPUs(sb *show.Backend[Frame]) {
	if len(b.devs) < 2 {
		return
	}
	own := make([]map[string]show.Constructor[Frame], len(b.devs))
	own[0] = maps.Clone(sb.Kinds)
	for i, d := range b.devs[1:] {
		own[i+1] = d.show().Kinds
	}
	for name := range sb.Kinds {
		sb.Kinds[name] = func(st *show.State, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
			i, err := b.gpuOf(n)
			if err != nil {
				return nil, err
			}
			return own[i][name](st, n, ctx)
		}
	}
	sb.NewCanvasOn = func(n plan.Node, f frame.Format, w, h int) (show.Canvas[Frame], error) {
		i, err := b.gpuOf(n)
		if err != nil {
			return nil, err
		}
		return b.devs[i].newCanvas(f, w, h)
	}
	sb.ToHost = func(f Frame) (*frame.Frame, func(), error) {
		if d, ok := f.(*gpu.Frame); ok && d != nil {
			if i, ok := b.cross.index(d.Context()); ok {
				return b.devs[i].toHost(f)
			}
		}
		return b.toHost(f)
	}
}

// gpuOf is the GPU node n runs on: its placement's, else GPU 0.
func (b *backend) gpuOf(n plan.Node) (int, error) {
	i, ok := n.Placement.OnGPU()
	if !ok {
		return 0, nil
	}
	if i < 0 || i >= len(b.devs) {
		return 0, fmt.Errorf("node %s: placed on GPU %d, but the show runs on %d GPUs", n.ID, i, len(b.devs))
	}
	return i, nil
}

// closeGPUs frees the copies' peers and pools, then every GPU's backend
// after the first (b, GPU 0's, frees its own).
func (b *backend) closeGPUs() {
	if b.cross != nil && b.gpuIndex == 0 {
		b.cross.close()
	}
	for _, d := range b.devs[min(1, len(b.devs)):] {
		d.close()
	}
}

// decodeLoops is every GPU's decode loops' counters; a loop on a GPU after
// the first is named with it ("decode_0/gpu1").
func (b *backend) decodeLoops() []DecodeLoopStatus {
	out := b.decodeLoopStatus()
	for _, d := range b.devs[min(1, len(b.devs)):] {
		for _, l := range d.decodeLoopStatus() {
			l.Loop += "/gpu" + strconv.Itoa(d.gpuIndex)
			out = append(out, l)
		}
	}
	return out
}

// recorded is what every GPU's backend holds of the files it loops.
func (b *backend) recorded() (files int, bytes int64) {
	files, bytes = b.recordings.Held()
	for _, d := range b.devs[min(1, len(b.devs)):] {
		f, n := d.recordings.Held()
		files, bytes = files+f, bytes+n
	}
	return files, bytes
}

// crossings copies frames between the show's GPUs: a Peer for each
// ordered pair of GPUs that copies, a pool of frames on each GPU for each
// frame shape that arrives there, and each source's latest copy on each
// GPU, so that a frame crosses to a GPU once however many of its buses
// draw it, and a frame a bus repeats is not copied again.
type crossings struct {
	devs []*backend // by GPU

	mu     sync.Mutex
	closed bool
	peers  map[[2]int]*gpu.Peer // from, to
	since  map[[2]int]time.Time // each Peer's first copy
	ended  time.Time            // when the show closed them
	pools  map[crossPool]*gpu.FramePool
	last   map[crossKey]lastCopy
}

// crossKey is a source's frames on one GPU: by the source the frames
// say they are of, or (a frame that names none) by the frame.
type crossKey struct {
	gpu    int
	source string
	frame  *gpu.Frame
}

// lastCopy is the latest copy of a source's frame on a GPU: the original
// (by identity and timestamp: a pooled frame comes back with another) and
// the copy, which the crossings hold a reference to.
type lastCopy struct {
	src  *gpu.Frame
	pts  int64
	copy *gpu.Frame
}

type crossPool struct {
	gpu   int
	f     frame.Format
	w, h  int
	alpha bool
}

// index is the GPU whose backend runs on c.
func (x *crossings) index(c *gpu.Context) (int, bool) {
	for i, d := range x.devs {
		if d.ctx == c {
			return i, true
		}
	}
	return 0, false
}

// copy queues a copy of src into a frame of context to's GPU, which it
// returns with one reference (its readers wait for the copy on the GPU).
func (x *crossings) copy(src *gpu.Frame, to *gpu.Context) (*gpu.Frame, error) {
	from, ok1 := x.index(src.Context())
	dst, ok2 := x.index(to)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("a frame of %s crosses between contexts the show does not run on", src.Source)
	}
	key := crossKey{gpu: dst, source: src.Source}
	if key.source == "" {
		key.frame = src
	}
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil, errClosed
	}
	if l, ok := x.last[key]; ok && l.src == src && l.pts == src.PTS {
		l.copy.Retain()
		x.mu.Unlock()
		return l.copy, nil
	}
	p := x.peers[[2]int{from, dst}]
	var err error
	if p == nil {
		if p, err = gpu.NewPeer(src.Context(), to); err != nil {
			x.mu.Unlock()
			return nil, fmt.Errorf("copies from GPU %d to GPU %d: %w", from, dst, err)
		}
		x.peers[[2]int{from, dst}] = p
		x.since[[2]int{from, dst}] = time.Now()
	}
	k := crossPool{dst, src.Format, src.Width, src.Height, src.Alpha != 0}
	pool := x.pools[k]
	if pool == nil {
		if k.alpha {
			pool, err = gpu.NewAlphaFramePool(to, k.f, k.w, k.h, 0)
		} else {
			pool, err = gpu.NewFramePool(to, k.f, k.w, k.h, 0)
		}
		if err != nil {
			x.mu.Unlock()
			return nil, err
		}
		x.pools[k] = pool
	}
	x.mu.Unlock()
	fr, err := pool.Get(nil) // the copy waits for the frame's readers
	if err != nil {
		return nil, err
	}
	if err := p.Copy(fr, src); err != nil {
		fr.Release()
		return nil, fmt.Errorf("a frame of %s from GPU %d to GPU %d: %w", src.Source, from, dst, err)
	}
	fr.Retain() // the crossings' reference, for the source's next reader here
	x.mu.Lock()
	if l, ok := x.last[key]; ok {
		l.copy.Release()
	}
	x.last[key] = lastCopy{src: src, pts: src.PTS, copy: fr}
	x.mu.Unlock()
	return fr, nil
}

func (x *crossings) close() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed, x.ended = true, time.Now()
	for k, l := range x.last {
		l.copy.Release()
		delete(x.last, k)
	}
	for _, p := range x.peers {
		p.Close()
	}
	for _, pool := range x.pools {
		pool.Close()
	}
}

// PeerCopyStatus is the frames copied from one GPU to another since the
// show started (a show on several GPUs), and the GPU time the copies took;
// CopiesPerSec is their rate since the first (to set beside the plan's
// estimate, peer_copies_in_per_sec).
type PeerCopyStatus struct {
	From         int     `json:"from"`
	To           int     `json:"to"`
	Copies       int64   `json:"copies"`
	Bytes        int64   `json:"bytes"`
	GPUNs        int64   `json:"gpu_ns"`
	CopiesPerSec float64 `json:"copies_per_sec"`
}

// status is every pair's counts, in order of from, then to.
func (x *crossings) status() []PeerCopyStatus {
	if x == nil {
		return nil
	}
	x.mu.Lock()
	end := time.Now()
	if x.closed {
		end = x.ended
	}
	out := make([]PeerCopyStatus, 0, len(x.peers))
	for k, p := range x.peers {
		n, bytes := p.Counts()
		st := PeerCopyStatus{From: k[0], To: k[1], Copies: n, Bytes: bytes, GPUNs: int64(p.GPUTime())}
		if d := end.Sub(x.since[k]).Seconds(); d > 0 {
			st.CopiesPerSec = float64(n) / d
		}
		out = append(out, st)
	}
	x.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].To < out[j].To
	})
	return out
}

// collectPeers emits the copies between GPUs as /metrics samples.
func collectPeers(s []PeerCopyStatus, emit func(metrics.Sample)) {
	for _, p := range s {
		l := [][2]string{{"from", strconv.Itoa(p.From)}, {"to", strconv.Itoa(p.To)}}
		c := func(name, help string, v float64) {
			emit(metrics.Sample{Name: name, Help: help, Kind: metrics.Counter, Labels: l, Value: v})
		}
		c("onair_gpu_peer_copies_total", "Frames copied from one GPU to another for a bus that draws them there.", float64(p.Copies))
		c("onair_gpu_peer_bytes_total", "Bytes copied from one GPU to another.", float64(p.Bytes))
		c("onair_gpu_peer_copy_seconds_total", "GPU time the copies from one GPU to another took.", float64(p.GPUNs)/1e9)
	}
}

// crossed is src as a frame of the canvas's GPU: src itself, or for a
// frame of another GPU its copy there, made once for each frame and GPU
// (the canvas keeps references to the copies of the tick it draws, for its
// layers and transitions, until Wait has seen it drawn).
func (c *canvas) crossed(src *gpu.Frame) (*gpu.Frame, error) {
	if c.cross == nil || src.Context() == c.ctx {
		return src, nil
	}
	if cp, ok := c.copies[src]; ok {
		return cp, nil
	}
	cp, err := c.cross.copy(src, c.ctx)
	if err != nil {
		return nil, err
	}
	if c.copies == nil {
		c.copies = map[*gpu.Frame]*gpu.Frame{}
	}
	c.copies[src] = cp
	return cp, nil
}

// dropCopies releases the tick's copies; the GPU is done with them (Wait
// synchronized, or Close).
func (c *canvas) dropCopies() {
	for src, cp := range c.copies {
		cp.Release()
		delete(c.copies, src)
	}
}
