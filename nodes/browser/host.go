package browser

import (
	"fmt"
	"log/slog"

	"golang.org/x/sys/unix"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media/ipc"
)

// Host runs browser sources on host frames (the CPU backend): a buffer's
// import is a read-only mmap of its sealed memfd, and its pictures are
// converted in Go into pooled NV12 or P010 frames.
var Host = &Backend[*frame.Frame]{Token: HostToken, NewImporter: NewHostImporter}

// tokens are the 2x2 frames that carry handles on the CPU.
var tokens, _ = frame.NewPool(frame.NV12, 2, 2, 0)

// HostToken is a 2x2 token frame from the host pool: the CPU's, and any
// backend's whose edges may carry host frames (the CUDA backend's do).
func HostToken() (*frame.Frame, error) { return tokens.Get() }

// HostImporter is the CPU's Importer.
type HostImporter struct {
	format frame.Format
	key    bool // pictures with alpha get frames with an alpha plane
	log    *slog.Logger

	pools Pools[*frame.Pool]
}

// hostMapping is one mapped buffer.
type hostMapping struct{ mem []byte }

// NewHostImporter makes an importer converting to format f, keying
// pictures with alpha when key is set (Backend.NewImporter).
func NewHostImporter(f frame.Format, key bool, log *slog.Logger) (Importer[*frame.Frame], error) {
	if f != frame.NV12 && f != frame.P010 {
		return nil, fmt.Errorf("gpu_import converts to nv12 or p010, not %v", f)
	}
	h := &HostImporter{format: f, key: key, log: log}
	h.pools = Pools[*frame.Pool]{New: h.newPool, Close: (*frame.Pool).Close}
	return h, nil
}

// Import maps b read-only (MapBuffer).
func (h *HostImporter) Import(b *ipc.Buffer) (Mapping, error) {
	mem, err := MapBuffer(b)
	if err != nil {
		return nil, err
	}
	return hostMapping{mem: mem}, nil
}

// MapBuffer maps a memfd buffer read-only, once CheckShared has made sure
// the producer cannot shrink it under the mapping: every backend's import
// of host buffers. UnmapBuffer undoes it.
func MapBuffer(b *ipc.Buffer) ([]byte, error) {
	if b.Picture.Memory != ipc.MemoryHost {
		return nil, fmt.Errorf("buffer %d of connection %d is %v memory, not a memfd: this backend maps memfds", b.ID, b.Connection, b.Picture.Memory)
	}
	if err := ipc.CheckShared(b.Fd(), b.Picture.Size); err != nil {
		return nil, fmt.Errorf("buffer %d of connection %d: %w", b.ID, b.Connection, err)
	}
	mem, err := unix.Mmap(b.Fd(), 0, b.Picture.Size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("buffer %d of connection %d: map %d bytes: %w", b.ID, b.Connection, b.Picture.Size, err)
	}
	return mem, nil
}

// UnmapBuffer undoes MapBuffer.
func UnmapBuffer(mem []byte) error { return unix.Munmap(mem) }

// Convert draws the buffer's picture into a pooled frame of its size.
func (h *HostImporter) Convert(m Mapping, b *ipc.Buffer) (*frame.Frame, error) {
	hm, ok := m.(hostMapping)
	if !ok {
		return nil, fmt.Errorf("buffer %d: not a host mapping (%T)", b.ID, m)
	}
	pool, err := h.pools.Get(PoolKey{b.Picture.Width, b.Picture.Height, h.key && HasAlpha(b.Picture)})
	if err != nil {
		return nil, err
	}
	f, err := pool.Get()
	if err != nil {
		return nil, err
	}
	if err := ToCanvas(f, hm.mem, b.Picture); err != nil {
		f.Release()
		return nil, fmt.Errorf("buffer %d: %w", b.ID, err)
	}
	f.Colour = frame.BT709
	return f, nil
}

// PoolFrames bounds the frames a pool of a browser source's pictures
// allocates: what its edges, the retimer and the buses hold, with room to
// spare. A conversion that finds every frame out fails (reported on the
// source) rather than grow memory without bound.
const PoolFrames = 24

func (h *HostImporter) newPool(k PoolKey) (*frame.Pool, error) {
	if k.Alpha {
		return frame.NewAlphaPool(h.format, k.W, k.H, PoolFrames)
	}
	return frame.NewPool(h.format, k.W, k.H, PoolFrames)
}

// Release unmaps the buffer.
func (h *HostImporter) Release(m Mapping) error {
	hm, ok := m.(hostMapping)
	if !ok {
		return fmt.Errorf("release: not a host mapping (%T)", m)
	}
	return UnmapBuffer(hm.mem)
}

// Close closes the pools; frames still out are let go as they come back.
func (h *HostImporter) Close() { h.pools.CloseAll() }

// PoolsKept is how many frame pools the importer keeps.
func (h *HostImporter) PoolsKept() int { return h.pools.Len() }
