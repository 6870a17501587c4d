package browser

import (
	"log/slog"
	goruntime "runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/nodes/media/ipc"
	"github.com/onairhq/onair/nodes/show"
)

// Mapping is an Importer's handle on one imported buffer: a host mapping
// on the CPU; on the GPU a mapped memfd or the producer's CUDA memory mapped here.
type Mapping any

// Importer makes one browser source's buffers usable by a backend and
// turns their pictures into the backend's frames. A gpu_import node holds
// one: it calls Import and Convert from the node's thread, and Release
// from its release thread (never two Releases at once, but a Release may
// run while the node's thread imports or converts another buffer).
//
// The node decides when to import and release (Imports): once per buffer,
// kept until the buffer is unused for import_ttl_ms, dead (the producer
// destroyed it, or its connection ended), or idle 500 ms as the show goes
// on air with purge_idle. An Importer does what it is told.
type Importer[F show.Frame] interface {
	// Import maps buffer b, whose picture b.Picture describes. b.Fd() is
	// open during the call and stays the receiver's: an importer that hands
	// the descriptor to an API taking ownership of it (CUDA's opaque fd
	// import does) passes a dup. An error names the buffer and says what
	// the producer must change (a descriptor that is not the memory the
	// backend maps).
	Import(b *ipc.Buffer) (Mapping, error)
	// Convert draws the picture that m holds into a new frame of the
	// importer's format (NV12 or P010, BT.709 limited range), the buffer's
	// size. It returns once the buffer's memory is no longer read: on a GPU,
	// after the conversion's stream has finished with it. The buffer then
	// goes back to the producer.
	Convert(m Mapping, b *ipc.Buffer) (F, error)
	// Release undoes an Import. On the GPU it is the expensive call (the
	// seeds' driver took a lock every other CUDA call waits on): the node
	// calls it rarely, on its release thread.
	Release(m Mapping) error
	// Close frees what the importer holds beyond its imports (its pools);
	// called once every import was released.
	Close()
}

// Backend is what a backend supplies to run browser sources.
type Backend[F show.Frame] struct {
	// Token makes a frame of the backend's type that carries a received
	// frame's handle from ipc_dmabuf_source to gpu_import in its Metadata;
	// its pixels are never read. Keep them tiny (a 2x2 frame from a pool).
	Token func() (F, error)
	// NewImporter makes the importer of one gpu_import node, converting to
	// format f; with key, pictures with alpha (HasAlpha) become frames with
	// an alpha plane, keyed over the scene (frame/keying.go), and without
	// it they are composited over black.
	NewImporter func(f frame.Format, key bool, log *slog.Logger) (Importer[F], error)
	// Memories are the buffer memories the importer takes (a producer of
	// another kind is refused at HELLO); nil is memfds only.
	Memories []ipc.Memory

	// The browser sources' receivers share one thread (ipc.Poller), while
	// any runs.
	pollMu    sync.Mutex
	poller    *ipc.Poller
	pollUsers int
}

// PollerThread is the name of the thread the browser sources' receivers
// share, in /proc.
const PollerThread = "onair-browser"

// acquirePoller returns the receivers' shared poller, starting it (and
// its thread) for the first source.
func (be *Backend[F]) acquirePoller() (*ipc.Poller, error) {
	be.pollMu.Lock()
	defer be.pollMu.Unlock()
	if be.poller == nil {
		p, err := ipc.NewPoller()
		if err != nil {
			return nil, err
		}
		started := make(chan struct{})
		go func() {
			goruntime.LockOSThread() // the named thread exits with Run
			name := append([]byte(PollerThread), 0)
			unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0)
			close(started)
			// What a receiver's round does is recovered by the poller (the
			// receiver's source fails); this keeps the process past the rest.
			defer panics.Catch("the browser sources' receivers", slog.Default(), func(error) {})
			if err := p.Run(); err != nil {
				slog.Error("the browser sources' receivers stopped", "error", err)
			}
		}()
		<-started
		be.poller = p
	}
	be.pollUsers++
	return be.poller, nil
}

// releasePoller lets go of the poller; the last source's stops it.
func (be *Backend[F]) releasePoller() {
	be.pollMu.Lock()
	be.pollUsers--
	var last *ipc.Poller
	if be.pollUsers == 0 {
		last, be.poller = be.poller, nil
	}
	be.pollMu.Unlock()
	if last != nil {
		last.Close()
	}
}

// Kinds are the constructors of the two browser kinds for the backend's
// show.Backend.Kinds.
func (be *Backend[F]) Kinds() map[string]show.Constructor[F] {
	return map[string]show.Constructor[F]{
		"ipc_dmabuf_source": be.newSource,
		"gpu_import":        be.newImport,
	}
}

// tokenSource marks a token frame's Meta.Source: a frame that carries a
// handle (in SourceFrame), not a picture.
const tokenSource = "\x00ipc-frame-handle"
