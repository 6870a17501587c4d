package cuda

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/browser"
	"github.com/onairhq/onair/nodes/media/ipc"
)

// GPUPainter paints the test pattern of `onair producer -gpu` into CUDA
// buffers, as a GPU producer (a browser's compositor) would hand them over:
// device memory made with cuMemCreate and exported as POSIX file
// descriptors (ipc.MemoryCUDA). The pixels are painted on the host into a
// page-locked block and uploaded, only the rectangles that changed.
type GPUPainter struct {
	ctx    *gpu.Context
	stream *gpu.Stream

	mu      sync.Mutex
	scratch *gpu.HostMemory
}

// NewGPUPainter makes a painter in context c. Close frees it once its
// producer has freed its buffers.
func NewGPUPainter(c *gpu.Context) (*GPUPainter, error) {
	s, err := c.NewStream()
	if err != nil {
		return nil, err
	}
	return &GPUPainter{ctx: c, stream: s}, nil
}

// Painter is the browser.Painter to give the pattern producer.
func (g *GPUPainter) Painter() browser.Painter {
	return browser.Painter{Memory: ipc.MemoryCUDA, Alloc: g.alloc, Paint: g.paint}
}

// alloc makes one buffer: shareable device memory and its descriptor.
func (g *GPUPainter) alloc(size int) (ipc.BufferMemory, error) {
	m, err := g.ctx.AllocShared(size)
	if err != nil {
		return ipc.BufferMemory{}, err
	}
	fd, err := m.ExportFD()
	if err != nil {
		m.Free()
		return ipc.BufferMemory{}, err
	}
	return ipc.BufferMemory{Fd: fd, Device: m, Free: func() {
		unix.Close(fd)
		m.Free()
	}}, nil
}

// paint paints each rectangle into the page-locked block, uploads them all
// and waits for the copies: the picture is complete when it returns.
func (g *GPUPainter) paint(b *ipc.ProducerBuffer, pic ipc.Picture, rs []frame.Rect, seq uint64) error {
	m, ok := b.Device().(*gpu.SharedMemory)
	if !ok {
		return fmt.Errorf("buffer %d is not CUDA memory (%T)", b.ID(), b.Device())
	}
	need := 0
	for _, r := range rs {
		need += r.W * r.H * 4
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.scratch == nil || g.scratch.Len() < need {
		if g.scratch != nil {
			g.scratch.Free()
			g.scratch = nil
		}
		s, err := g.ctx.HostAlloc(max(need, pic.Size), 0)
		if err != nil {
			return err
		}
		g.scratch = s
	}
	buf := g.scratch.Bytes()
	for _, r := range rs {
		row := r.W * 4
		browser.PaintPattern(buf, row, pic.Width, pic.Height, r, seq)
		dst := gpu.DeviceRegion(m.Ptr+gpu.DevicePtr(r.Y*pic.Pitch+r.X*4), pic.Pitch)
		if err := g.stream.Copy2D(dst, gpu.HostRegion(buf, row), row, r.H); err != nil {
			return err
		}
		buf = buf[row*r.H:]
	}
	return g.stream.Synchronize()
}

// Close frees the painter's block and stream.
func (g *GPUPainter) Close() {
	g.stream.Synchronize()
	g.mu.Lock()
	if g.scratch != nil {
		g.scratch.Free()
		g.scratch = nil
	}
	g.mu.Unlock()
	g.stream.Close()
}
