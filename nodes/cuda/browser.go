package cuda

import (
	"errors"
	"fmt"
	"log/slog"

	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/browser"
	"github.com/onairhq/onair/nodes/media/ipc"
)

// Browser sources on the GPU: ipc_dmabuf_source and gpu_import are
// nodes/browser's; this file is the CUDA backend's Importer. A producer's
// buffers are either memfds (mapped as on the CPU, optionally page-locked,
// copied to the device) or CUDA device memory it exported as POSIX file
// descriptors (imported and mapped: cuMemImportFromShareableHandle). Either
// way a kernel (cuda.PictureConverter) converts the picture into a pooled
// device frame, byte for byte what nodes/browser's CPU converter writes.

// RegisterHostBuffers page-locks each imported memfd (cuMemHostRegister)
// so that its copy to the device runs at the bus's full speed and without
// the driver's staging copy (nodes/browser/BENCHMARKS.md has the figures).
const RegisterHostBuffers = true

func init() {
	// ipc_dmabuf_source and gpu_import are nodes/browser's (browserBackend).
	Lowering.Lower("browser", nodes.Chain{Links: []nodes.Link{nodes.L("ipc_dmabuf_source"), nodes.L("gpu_import", "convert_on", "loop"), nodes.L("smooth_timestamps"), nodes.L("one_to_many")}})
}

// browserBackend is what nodes/browser needs to run browser sources here.
// Tokens are host frames (the backend's edges carry both kinds).
func (b *backend) browserBackend() *browser.Backend[Frame] {
	return &browser.Backend[Frame]{
		Token: func() (Frame, error) {
			f, err := browser.HostToken()
			if err != nil {
				return nil, err
			}
			return f, nil
		},
		NewImporter: func(f frame.Format, key bool, log *slog.Logger) (browser.Importer[Frame], error) {
			if b.ctx == nil {
				return nil, errClosed
			}
			im, err := NewImporter(b.ctx, f, log, RegisterHostBuffers)
			if err == nil {
				im.Key = key
			}
			return im, err
		},
		Memories: []ipc.Memory{ipc.MemoryHost, ipc.MemoryCUDA},
	}
}

// Importer is the CUDA backend's browser.Importer: one per gpu_import node,
// with a stream, a converter and a blocking-sync event of its own.
type Importer struct {
	ctx      *gpu.Context
	format   frame.Format
	coeffs   gpu.Coeffs
	log      *slog.Logger
	register bool
	// Key gives pictures with alpha (browser.HasAlpha) frames with an alpha
	// plane, keyed over the scene; without it they are composited over
	// black. Set it before the first Convert.
	Key bool

	stream  *gpu.Stream
	conv    *gpu.PictureConverter
	read    *gpu.Event        // the conversion no longer reads the buffer
	staging *gpu.DeviceMemory // memfd pictures are copied here for the kernel

	pools browser.Pools[*gpu.FramePool] // at most browser.MaxPools, one per picture size
}

// hostImport is a mapped memfd, page-locked when reg is set.
type hostImport struct {
	mem []byte
	reg *gpu.Registered
}

// deviceImport is a producer's device memory mapped here.
type deviceImport struct{ mem *gpu.SharedMemory }

// NewImporter makes an importer converting to format f (NV12 or P010) in
// context c; register page-locks memfd buffers as they are imported.
func NewImporter(c *gpu.Context, f frame.Format, log *slog.Logger, register bool) (*Importer, error) {
	if f != frame.NV12 && f != frame.P010 {
		return nil, fmt.Errorf("gpu_import converts to nv12 or p010, not %v", f)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	im := &Importer{ctx: c, format: f, coeffs: gpu.Coeffs(browser.CoeffsFor(f)), log: log, register: register}
	im.pools = browser.Pools[*gpu.FramePool]{New: im.newPool, Close: (*gpu.FramePool).Close}
	var err error
	if im.stream, err = c.NewStream(); err == nil {
		if im.conv, err = gpu.NewPictureConverter(im.stream); err == nil {
			im.read, err = c.NewEvent(gpu.EventBlockingSync | gpu.EventDisableTiming)
		}
	}
	if err != nil {
		im.Close()
		return nil, fmt.Errorf("gpu_import: %w", err)
	}
	return im, nil
}

// Import maps buffer b: a memfd read-only (page-locked when the importer
// registers), or the producer's exported device memory.
func (im *Importer) Import(b *ipc.Buffer) (browser.Mapping, error) {
	if b.Picture.Memory == ipc.MemoryCUDA {
		m, err := im.ctx.ImportShared(b.Fd(), b.Picture.Size)
		if err != nil {
			return nil, fmt.Errorf("buffer %d of connection %d: %w", b.ID, b.Connection, err)
		}
		return &deviceImport{mem: m}, nil
	}
	mem, err := browser.MapBuffer(b)
	if err != nil {
		return nil, err
	}
	h := &hostImport{mem: mem}
	if im.register {
		if h.reg, err = im.ctx.Register(mem); err != nil {
			// Still usable, at pageable speed: say so once and stop trying.
			im.register = false
			im.log.Warn("browser buffers are copied from pageable memory", "buffer", b.ID, "connection", b.Connection, "error", err)
		}
	}
	return h, nil
}

// Convert draws b's picture into a pooled device frame on the importer's
// stream and returns once the buffer is no longer read.
func (im *Importer) Convert(m browser.Mapping, b *ipc.Buffer) (Frame, error) {
	p := b.Picture
	pool, err := im.pools.Get(browser.PoolKey{W: p.Width, H: p.Height, Alpha: im.Key && browser.HasAlpha(p)})
	if err != nil {
		return nil, err
	}
	dst, err := pool.Get(im.stream)
	if err != nil {
		return nil, fmt.Errorf("buffer %d: %w", b.ID, err)
	}
	if err := im.convert(dst, m, b); err != nil {
		dst.Release()
		return nil, fmt.Errorf("buffer %d of connection %d: %w", b.ID, b.Connection, err)
	}
	dst.Colour = frame.BT709
	return dst, nil
}

func (im *Importer) convert(dst *gpu.Frame, m browser.Mapping, b *ipc.Buffer) error {
	pic := DevicePicture(b.Picture, im.coeffs)
	switch m := m.(type) {
	case *deviceImport:
		pic.Src = m.mem.Ptr
	case *hostImport:
		if im.staging == nil || im.staging.Size < b.Picture.Size {
			if im.staging != nil {
				if err := im.stream.Synchronize(); err != nil {
					return err
				}
				im.staging.Free()
				im.staging = nil
			}
			s, err := im.ctx.Alloc(b.Picture.Size)
			if err != nil {
				return err
			}
			im.staging = s
		}
		if err := im.stream.CopyHtoD(im.staging.Ptr, m.mem[:b.Picture.Size]); err != nil {
			return err
		}
		pic.Src = im.staging.Ptr
	default:
		return fmt.Errorf("not a CUDA import (%T)", m)
	}
	if err := im.conv.Convert(dst, pic); err != nil {
		return err
	}
	if err := im.read.Record(im.stream); err != nil {
		return err
	}
	return im.read.Synchronize()
}

// DevicePicture describes a producer's picture for the conversion kernel
// (its Src set by the caller).
func DevicePicture(p ipc.Picture, k gpu.Coeffs) gpu.Picture {
	r, g, b := browser.Channels(p.Format)
	return gpu.Picture{
		Width: p.Width, Height: p.Height, Pitch: p.Pitch, NV12: p.Format == ipc.NV12, Offset1: p.Offset1,
		R: r, G: g, B: b, Straight: p.Alpha == ipc.AlphaStraight, Alpha: browser.HasAlpha(p), Coeffs: k,
	}
}

func (im *Importer) newPool(k browser.PoolKey) (*gpu.FramePool, error) {
	if k.Alpha {
		return gpu.NewAlphaFramePool(im.ctx, im.format, k.W, k.H, browser.PoolFrames)
	}
	return gpu.NewFramePool(im.ctx, im.format, k.W, k.H, browser.PoolFrames)
}

// Release undoes an Import: unregister and unmap a memfd, or unmap and
// release the producer's device memory (the driver call the seeds saw
// holding a lock every other call waits for: gpu_import calls it rarely,
// on its release thread).
func (im *Importer) Release(m browser.Mapping) error {
	switch m := m.(type) {
	case *deviceImport:
		return m.mem.Free()
	case *hostImport:
		return errors.Join(m.reg.Unregister(), browser.UnmapBuffer(m.mem))
	}
	return fmt.Errorf("release: not a CUDA import (%T)", m)
}

// Close frees the pools, the staging buffer, the converter and the stream.
func (im *Importer) Close() {
	if im.stream != nil {
		im.stream.Synchronize()
	}
	im.pools.CloseAll()
	if im.staging != nil {
		im.staging.Free()
	}
	if im.conv != nil {
		im.conv.Close()
	}
	if im.read != nil {
		im.read.Close()
	}
	if im.stream != nil {
		im.stream.Close()
	}
}
