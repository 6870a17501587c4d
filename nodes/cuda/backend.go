package cuda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/metrics"
	"github.com/onairhq/onair/nodes/media/es"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/playout"
	"github.com/onairhq/onair/runtime"
)

// Frame is what travels on the CUDA backend's edges: a picture in host
// memory (*frame.Frame, from a host reader up to its upload)
// or in device memory (*gpu.Frame, from an upload on).
type Frame interface {
	Retain()
	Release()
	Metadata() *frame.Meta
}

// Probe says whether a GPU is usable here: the driver loads, a device is
// there.
func Probe() (string, error) {
	d, err := gpu.Probe()
	if err != nil {
		return "", fmt.Errorf("no usable GPU: %w", err)
	}
	return fmt.Sprintf("found %s (CUDA %s)", d.Devices[0].Name, d.VersionString()), nil
}

// DeviceName is the name the driver gives the GPU shows run on (device
// 0), "" when there is none.
func DeviceName() string {
	d, err := gpu.Probe()
	if err != nil || len(d.Devices) == 0 {
		return ""
	}
	return d.Devices[0].Name
}

// Kinds lists the node kinds the CUDA backend runs.
func Kinds() []string { return show.Kinds(newBackend(nil).show()) }

// Start runs a plan compiled for the CUDA backend: on device 0, or on a
// show over several GPUs each node on the GPU its placement names (gpus.go).
func Start(ctx context.Context, p *plan.Plan, planJSON []byte, opts show.Options, log *slog.Logger) (show.Running, error) {
	n := p.Canvas.Int("gpus")
	ctxs, standIn, err := openContexts(n)
	if err != nil {
		return nil, fmt.Errorf("the CUDA backend cannot start: %w", err)
	}
	b := newBackend(ctxs[0])
	if log != nil {
		b.log = log
	}
	b.spread(ctxs)
	if standIn {
		b.gpu = newGPUMonitor(1) // the one GPU the stand-ins share
		b.log.Info("the show's GPUs are contexts on GPU 0", "gpus", n, "env", StandInEnv)
	} else {
		b.gpu = newGPUMonitor(n) // NVML for each GPU the plan spans
	}
	sb := b.show()
	b.onGPUs(sb)
	sb.Device = func() any {
		st := b.gpu.Read()
		st.DecodeLoops = b.decodeLoops()
		st.RecordedFiles, st.RecordedBytes = b.recorded()
		st.PeerCopies = b.cross.status()
		return st
	}
	sb.DeviceMetrics = func(emit func(metrics.Sample)) {
		b.gpu.Collect(emit)
		st := GPUStatus{DecodeLoops: b.decodeLoops()}
		st.RecordedFiles, st.RecordedBytes = b.recorded()
		st.collectDecode(emit)
		collectPeers(b.cross.status(), emit)
	}
	s, err := show.Start(ctx, sb, p, planJSON, opts, log)
	if err != nil {
		return nil, err // show.Start closed the backend
	}
	return s, nil
}

// backend is one run's GPU state: the context, the shared raw reader pool,
// and the page-locked buffers outputs download into.
type backend struct {
	ctx     *gpu.Context
	readers *readerPool
	gpu     *gpuMonitor
	log     *slog.Logger

	nvdec *gpu.NVDEC             // opened by the first decoder
	loops map[string]*decodeLoop // the plan's decode loops, started by their first decoder

	// recordings hold the access units of the HEVC and H.264 files the
	// show loops, read from disk once for all the sources of a file.
	recordings es.Recordings

	arts artCache // the test patterns' art, shared by the sources of one pattern and size

	// A show on several GPUs (gpus.go): the GPU this backend runs nodes
	// on, and on GPU 0's backend every GPU's (itself first); the copies
	// between them, shared.
	gpuIndex int
	devs     []*backend
	cross    *crossings

	mu        sync.Mutex
	downloads map[downloadKey][]*download
	all       []*download
}

func newBackend(c *gpu.Context) *backend {
	return &backend{ctx: c, downloads: map[downloadKey][]*download{}, loops: map[string]*decodeLoop{}, log: slog.Default()}
}

func (b *backend) show() *show.Backend[Frame] {
	all := map[string]show.Constructor[Frame]{}
	for k, mk := range kinds { // added by the files that define them
		all[k] = func(st *show.State, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
			return mk(b, st, n, ctx)
		}
	}
	maps.Copy(all, b.browserBackend().Kinds()) // ipc_dmabuf_source, gpu_import
	return &show.Backend[Frame]{
		Name:      Name,
		NewCanvas: b.newCanvas,
		ToHost:    b.toHost,
		Kinds:     all,
		Close:     b.close,
	}
}

func (b *backend) close() {
	b.closeGPUs()
	if b.readers != nil {
		b.readers.close()
	}
	b.mu.Lock()
	loops := b.loops
	b.loops = nil
	b.mu.Unlock()
	for name, l := range loops {
		l.stop()
		logLoopStats(b.log, "decode loop", name, l.loop.Stats())
	}
	if b.nvdec != nil {
		b.nvdec.Close()
	}
	if b.gpu != nil {
		b.gpu.Close()
	}
	b.mu.Lock()
	for _, d := range b.all {
		d.free()
	}
	b.all, b.downloads = nil, nil
	b.mu.Unlock()
	if b.ctx != nil {
		b.ctx.Close()
	}
}

// canvas draws one bus on the GPU: one compositor launch per draw on a
// stream of its own, canvas frames from a device pool (a steady show
// allocates nothing), and a blocking-sync event to wait on without spinning.
type canvas struct {
	ctx    *gpu.Context
	cross  *crossings                // nil on a show of one GPU
	copies map[*gpu.Frame]*gpu.Frame // this tick's copies of other GPUs' frames, by original
	stream *gpu.Stream
	comp   *gpu.Compositor
	pool   *gpu.FramePool
	drawn  *gpu.Event
	layers []gpu.Layer
}

func (b *backend) newCanvas(f frame.Format, w, h int) (show.Canvas[Frame], error) {
	s, err := b.ctx.NewStream()
	if err != nil {
		return nil, err
	}
	c := &canvas{ctx: b.ctx, cross: b.cross, stream: s}
	if c.comp, err = gpu.NewCompositor(s); err == nil {
		if c.pool, err = gpu.NewFramePool(b.ctx, f, w, h, 0); err == nil {
			c.drawn, err = b.ctx.NewEvent(gpu.EventBlockingSync | gpu.EventDisableTiming)
		}
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *canvas) Get() (Frame, error) {
	f, err := c.pool.Get(c.stream)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func device(f Frame, what string) (*gpu.Frame, error) {
	if d, ok := f.(*gpu.Frame); ok && d != nil {
		return d, nil
	}
	return nil, fmt.Errorf("%s is a %T, not a frame in device memory: the plan lacks an upload", what, f)
}

func rect(r frame.Rect) gpu.Rect { return gpu.Rect{X: r.X, Y: r.Y, W: r.W, H: r.H} }

func (c *canvas) Draw(dst Frame, layers []show.Layer[Frame]) error {
	d, err := device(dst, "the canvas")
	if err != nil {
		return err
	}
	c.layers = c.layers[:0]
	for _, l := range layers {
		gl := gpu.Layer{Opacity: l.Opacity, Z: l.Z}
		if l.Frame != nil {
			src, err := device(l.Frame, "a layer's picture")
			if err == nil {
				src, err = c.crossed(src)
			}
			if err != nil {
				return err
			}
			p := frame.Place(src.Width, src.Height, l.Crop, l.Rect, l.Fit)
			gl.Frame, gl.Crop, gl.Dst, gl.Pad = src, rect(p.Crop), rect(p.Dst), rect(p.Pad)
		}
		c.layers = append(c.layers, gl)
	}
	return c.comp.Draw(d, c.layers)
}

func (c *canvas) Transition(dst, from, to Frame, kind playout.Kind, progress float64) error {
	d, err := device(dst, "the canvas")
	if err != nil {
		return err
	}
	a, err := device(from, "a transition's first render")
	if err != nil {
		return err
	}
	z, err := device(to, "a transition's second render")
	if err != nil {
		return err
	}
	return c.comp.Transition(d, a, z, kind, progress)
}

// Wait sleeps until the GPU has drawn everything queued on the canvas's
// stream (an event made with blocking sync: no core spins meanwhile).
func (c *canvas) Wait(Frame) error {
	if err := c.drawn.Record(c.stream); err != nil {
		return err
	}
	err := c.drawn.Synchronize()
	if err == nil {
		c.dropCopies()
	}
	return err
}

// Drawn implements show.PollsDrawn: whether the GPU has drawn everything
// queued on the canvas's stream, asked without waiting (the stream
// queried), so an AUX bus on a loop commits as its own picture is done.
// Found drawn, the tick's copies of other GPUs' frames go, as after Wait.
func (c *canvas) Drawn(Frame) (bool, error) {
	done, err := c.stream.Query()
	if done && err == nil {
		c.dropCopies()
	}
	return done, err
}

var _ show.PollsDrawn[Frame] = (*canvas)(nil) // checked where no GPU runs the test

func (c *canvas) Close() {
	if len(c.copies) > 0 && c.stream.Synchronize() == nil {
		c.dropCopies()
	}
	if c.comp != nil {
		c.comp.Close()
	}
	if c.drawn != nil {
		c.drawn.Close()
	}
	if c.pool != nil {
		c.pool.Close()
	}
	if c.stream != nil {
		c.stream.Close()
	}
}

// download is a page-locked picture an output's frames are copied into,
// with a stream and a blocking-sync event of its own.
type download struct {
	key    downloadKey
	mem    *gpu.HostMemory
	host   *frame.Frame
	stream *gpu.Stream
}

type downloadKey struct {
	f    frame.Format
	w, h int
}

func (d *download) free() {
	d.stream.Close()
	d.mem.Free()
}

// toHost copies a bus's frame into page-locked memory for an output that
// writes host pictures (record, ffmpeg, preview); only those outputs ask,
// so a bus with none never downloads. Buffers are reused per size: a
// steady show allocates nothing.
func (b *backend) toHost(f Frame) (*frame.Frame, func(), error) {
	if h, ok := f.(*frame.Frame); ok {
		return h, func() {}, nil
	}
	src, err := device(f, "an output's frame")
	if err != nil {
		return nil, nil, err
	}
	k := downloadKey{src.Format, src.Width, src.Height}
	b.mu.Lock()
	var d *download
	if free := b.downloads[k]; len(free) > 0 {
		d = free[len(free)-1]
		b.downloads[k] = free[:len(free)-1]
	}
	b.mu.Unlock()
	if d == nil {
		if d, err = b.newDownload(k); err != nil {
			return nil, nil, err
		}
	}
	if err := src.Download(d.stream, d.host); err != nil {
		b.putDownload(d)
		return nil, nil, err
	}
	return d.host, func() { b.putDownload(d) }, nil
}

func (b *backend) newDownload(k downloadKey) (*download, error) {
	s, err := b.ctx.NewStream()
	if err != nil {
		return nil, err
	}
	mem, err := b.ctx.HostAlloc(k.f.Size(k.w, k.h), 0)
	if err != nil {
		s.Close()
		return nil, err
	}
	host, err := frame.Wrap(k.f, k.w, k.h, mem.Bytes())
	if err != nil {
		s.Close()
		mem.Free()
		return nil, err
	}
	d := &download{key: k, mem: mem, host: host, stream: s}
	b.mu.Lock()
	b.all = append(b.all, d)
	b.mu.Unlock()
	return d, nil
}

func (b *backend) putDownload(d *download) {
	b.mu.Lock()
	if b.downloads != nil {
		b.downloads[d.key] = append(b.downloads[d.key], d)
	}
	b.mu.Unlock()
}

var errClosed = errors.New("the CUDA backend is closed")
