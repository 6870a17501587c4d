package cuda

/*
#cgo CFLAGS: -I${SRCDIR}
#include "driver.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// A show over several GPUs (canvas gpus) runs a context on each, and a
// frame a bus on another GPU needs crosses there once per tick: a Peer
// copies it, with cuMemcpyPeerAsync, into a frame of the destination GPU's
// pool. On a host of one GPU a context of onair's own on device 0
// (NewOwnContext) stands in for the second GPU, so every path runs there.

// NewOwnContext makes a context of onair's own on device, beside its
// primary context (NewContextOn): the stand-in for another GPU on a host of
// one. Close destroys it.
func NewOwnContext(device int, sched Sched) (*Context, error) {
	d, dev, err := loadDevice(device)
	if err != nil {
		return nil, err
	}
	var h C.onair_h
	if rc := C.onair_ctx_create(d.t, &h, C.uint(sched), dev); rc != 0 {
		return nil, fmt.Errorf("GPU %d: %w", device, d.err("cuCtxCreate", rc))
	}
	return &Context{d: d, h: h, device: int(dev), own: true}, nil
}

// peerAlreadyEnabled is CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED: another
// Peer between the two contexts enabled it first.
const peerAlreadyEnabled = 704

// Peer copies frames from one context to another, in order, counting
// them. Its methods may be called from any goroutine.
type Peer struct {
	from, to *Context
	fs, ts   *Stream // a stream of each side
	done     *Event  // recorded on fs after each copy; ts waits on it

	mu     sync.Mutex // one copy at a time: done is shared
	copies atomic.Int64
	bytes  atomic.Int64

	// start and end bracket the latest copy on fs (timing events); its GPU
	// time is added to gpuNs when the next copy comes, or at Close.
	start, end *Event
	timed      bool // start and end bracket a copy not yet added
	gpuNs      atomic.Int64
}

// NewPeer prepares copies from context from to context to. Between two
// devices that can reach each other's memory (NVLink or PCIe peer to
// peer) it lets from's context access to's memory; otherwise, and between
// two contexts of one device (the stand-in), cuMemcpyPeerAsync copies
// without it. Close releases its streams and event.
func NewPeer(from, to *Context) (*Peer, error) {
	if from.device != to.device {
		var can C.int
		if rc := C.onair_can_access_peer(from.d.t, &can, C.int(from.device), C.int(to.device)); rc != 0 {
			return nil, from.d.err("cuDeviceCanAccessPeer", rc)
		}
		if can != 0 {
			if rc := C.onair_enable_peer(from.d.t, from.h, to.h); rc != 0 && rc != peerAlreadyEnabled {
				return nil, fmt.Errorf("GPU %d to GPU %d: %w", from.device, to.device, from.d.err("cuCtxEnablePeerAccess", rc))
			}
		}
	}
	p := &Peer{from: from, to: to}
	var err error
	if p.fs, err = from.NewStream(); err == nil {
		if p.ts, err = to.NewStream(); err == nil {
			if p.done, err = from.NewEvent(EventDisableTiming); err == nil {
				if p.start, err = from.NewEvent(0); err == nil {
					p.end, err = from.NewEvent(0)
				}
			}
		}
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Copy queues a copy of src (a frame of the Peer's from context) into dst
// (one of its to context, from that GPU's pool, of src's format, size and
// pitch), with src's metadata. The copy waits on the GPU for src's writer;
// src may be released once Copy returns (its readers' event covers the
// copy) and dst's readers wait for the copy through its written event.
func (p *Peer) Copy(dst, src *Frame) error {
	if src.ctx != p.from || dst.ctx != p.to {
		return fmt.Errorf("cuda: a peer copy from GPU %d to %d got frames of other contexts", p.from.device, p.to.device)
	}
	if src.Format != dst.Format || src.Width != dst.Width || src.Height != dst.Height || src.Pitch != dst.Pitch || src.mem == nil || dst.mem == nil || src.mem.Size > dst.mem.Size {
		return fmt.Errorf("cuda: a peer copy of a %dx%d %v frame (pitch %d) into a %dx%d %v one (pitch %d)", src.Width, src.Height, src.Format, src.Pitch, dst.Width, dst.Height, dst.Format, dst.Pitch)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := src.WaitWritten(p.fs); err != nil {
		return err
	}
	dst.readMu.Lock() // dst's earlier readers, on its GPU, finish first
	err := p.fs.Wait(dst.read)
	dst.readMu.Unlock()
	if err != nil {
		return err
	}
	p.addTime()
	if err := p.start.Record(p.fs); err != nil {
		return err
	}
	n := src.mem.Size
	if rc := C.onair_peer_copy(p.from.d.t, p.from.h, C.onair_dptr(dst.mem.Ptr), p.to.h, C.onair_dptr(src.mem.Ptr), p.from.h, C.size_t(n), p.fs.h); rc != 0 {
		return p.from.d.err("cuMemcpyPeerAsync", rc)
	}
	if err := p.end.Record(p.fs); err != nil {
		return err
	}
	p.timed = true
	src.Retain() // the copy's own read: recorded on fs, then dropped
	if err := src.ReleaseAfter(p.fs); err != nil {
		return err
	}
	if err := p.done.Record(p.fs); err != nil {
		return err
	}
	if err := p.ts.Wait(p.done); err != nil { // a wait may name another context's event
		return err
	}
	if err := dst.MarkWritten(p.ts); err != nil {
		return err
	}
	dst.CopyMeta(src)
	p.copies.Add(1)
	p.bytes.Add(int64(n))
	return nil
}

// Counts is the copies made and the bytes they moved.
func (p *Peer) Counts() (copies, bytes int64) { return p.copies.Load(), p.bytes.Load() }

// GPUTime is the GPU time the copies took, from events around each on the
// copying stream: every copy but the latest, which is added when the next
// one is queued (by then it has long finished) or at Close.
func (p *Peer) GPUTime() time.Duration { return time.Duration(p.gpuNs.Load()) }

// addTime adds the GPU time of the copy start and end bracket, if any;
// p.mu is held. A copy still running is waited for (it is a tick old when
// the next copy comes, so this does not wait in practice).
func (p *Peer) addTime() {
	if !p.timed {
		return
	}
	p.timed = false
	if done, err := p.end.Query(); err == nil && !done {
		if p.end.Synchronize() != nil {
			return
		}
	}
	if d, err := p.end.Since(p.start); err == nil {
		p.gpuNs.Add(int64(d))
	}
}

// Context is the context the frame's memory belongs to.
func (fr *Frame) Context() *Context { return fr.ctx }

// Close waits for the copies queued and releases the streams and event.
func (p *Peer) Close() error {
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	for _, s := range []*Stream{p.fs, p.ts} {
		if s != nil {
			keep(s.Synchronize())
		}
	}
	if p.end != nil {
		p.mu.Lock()
		p.addTime()
		p.mu.Unlock()
	}
	for _, s := range []*Stream{p.fs, p.ts} {
		if s != nil {
			keep(s.Close())
		}
	}
	for _, e := range []*Event{p.done, p.start, p.end} {
		if e != nil {
			keep(e.Close())
		}
	}
	return first
}
