package browser

import (
	"fmt"
	"log/slog"
	"sync"

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

	mu    sync.Mutex
	pools map[poolKey]*frame.Pool
}

// poolKey is what a picture's frames are pooled by: its size and whether
// they have an alpha plane.
type poolKey struct {
	w, h  int
	alpha bool
}

// hostMapping is one mapped buffer.
type hostMapping struct{ mem []byte }

// NewHostImporter makes an importer converting to format f, keying
// pictures with alpha when key is set (Backend.NewImporter).
func NewHostImporter(f frame.Format, key bool, log *slog.Logger) (Importer[*frame.Frame], error) {
	if f != frame.NV12 && f != frame.P010 {
		return nil, fmt.Errorf("gpu_import converts to nv12 or p010, not %v", f)
	}
	return &HostImporter{format: f, key: key, log: log, pools: map[poolKey]*frame.Pool{}}, nil
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
	pool, err := h.pool(poolKey{b.Picture.Width, b.Picture.Height, h.key && HasAlpha(b.Picture)})
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

func (h *HostImporter) pool(k poolKey) (*frame.Pool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.pools[k]
	if p == nil {
		newPool := frame.NewPool
		if k.alpha {
			newPool = frame.NewAlphaPool
		}
		var err error
		if p, err = newPool(h.format, k.w, k.h, 0); err != nil {
			return nil, err
		}
		h.pools[k] = p
	}
	return p, nil
}

// Release unmaps the buffer.
func (h *HostImporter) Release(m Mapping) error {
	hm, ok := m.(hostMapping)
	if !ok {
		return fmt.Errorf("release: not a host mapping (%T)", m)
	}
	return UnmapBuffer(hm.mem)
}

// Close drops the pools; frames still out are garbage collected.
func (h *HostImporter) Close() {
	h.mu.Lock()
	clear(h.pools)
	h.mu.Unlock()
}
