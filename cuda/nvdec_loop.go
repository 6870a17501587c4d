package cuda

// The decode loop: one OS thread feeding several NVDEC decoders round
// robin, mapping what they decoded, copying it into their frames with one
// kernel launch a round and handing the frames on. nvdec_lib.go says how
// the parts fit.

/*
#cgo CFLAGS: -I${SRCDIR}
#include "nvdec.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/onairhq/onair/internal/panics"
)

// NVDECPoll is how soon a loop looks again at a decoder that had nothing
// to feed (its source was empty) or was held back by its Ready, and runs
// its Every functions again.
const NVDECPoll = 2 * time.Millisecond

// NVDECLoop is one OS thread that decodes several streams round robin.
type NVDECLoop struct {
	n      *NVDEC
	stream *Stream
	// ownStream: the stream is the loop's (NewLoop), and the loop ends
	// with its decoders; a loop on a borrowed stream (NewLoopOn) runs
	// until stopped and frees the decoders that end.
	ownStream bool
	every     map[int]func() bool
	nextFn    int
	// everyMu is held while the Every functions run, so that a cancel
	// returns only once its function is not running.
	everyMu  sync.Mutex
	everyIDs []int
	name     string // the thread's name in /proc (SetName)
	stats    nvdecStats

	mu       sync.Mutex
	decs     []*NVDECDecoder
	wake     *loopWake
	stopping atomic.Bool

	// One round's mapped pictures and their decode statuses, reused.
	batch  []mapped
	status []string

	clk *C.nvd_clocks // CPU clocks by call (NVDECClocksEnv), or nil

	// copies is the round's table for the copy kernel (C memory), nil
	// when the loop copies picture by picture (NVDECCopyEnv "each", or
	// copyWhy: the kernels could not be had).
	copies  *C.nvd_copies
	batched bool
	copyWhy error
}

// NVDECCopyEnv chooses how a decode loop copies the pictures it maps out
// of the decoder's surfaces: "batch" (the default: anything but "each")
// copies every picture of a round with one kernel launch on the loop's
// stream (onair_copy8/onair_copy128 of the compositor's PTX, from the
// module of NVDEC's Context);
// "each" queues a cuMemcpy2DAsync per picture (one, or two where the
// surface's chroma rows do not follow its luma rows as the frame's do),
// as a loop does anyway when the kernels cannot be had (CopyMode says
// why). Read when a loop is made.
const NVDECCopyEnv = "ONAIR_NVDEC_COPY"

// CopyMode says how the loop copies pictures: "batch" (one kernel launch
// a round) or "each" (a cuMemcpy2DAsync per plane region), and, for "each"
// where "batch" was asked, why.
func (l *NVDECLoop) CopyMode() (mode string, why error) {
	if l.batched {
		return "batch", nil
	}
	return "each", l.copyWhy
}

// setCopies gives the loop its copy table for the kernels copy8 and
// copy128, unless err says they cannot be had.
func (l *NVDECLoop) setCopies(copy8, copy128 unsafe.Pointer, err error) {
	if err == nil && (copy8 == nil || copy128 == nil) {
		err = errors.New("the compositor PTX has no copy kernels (onair_copy8, onair_copy128): rebuild it with `make ptx`")
	}
	if err != nil {
		l.copyWhy = err
		return
	}
	l.copies = (*C.nvd_copies)(C.calloc(1, C.sizeof_nvd_copies))
	l.copies.copy8, l.copies.copy128 = copy8, copy128
	l.batched = true
}

// NVDECClocksEnv, set to anything, has every decode loop read its thread's
// CPU clock around each NVIDIA call (Stats' CPU fields): a measurement,
// about ten system calls a picture, not for shows on air.
const NVDECClocksEnv = "ONAIR_NVDEC_CLOCKS"

// newClocks is a loop's CPU clocks when NVDECClocksEnv asks for them. They
// live as long as the process: a loop's decoders may outlive its Run.
func newClocks() *C.nvd_clocks {
	if os.Getenv(NVDECClocksEnv) == "" {
		return nil
	}
	return (*C.nvd_clocks)(C.calloc(1, C.sizeof_nvd_clocks))
}

type mapped struct {
	d   *NVDECDecoder
	f   *Frame
	ts  int64
	ptr C.ulonglong
	pic C.int
	err error // marking its frame written failed
}

// NewLoop makes a loop with a stream of its own in NVDEC's Context; it
// ends when its decoders have.
func (n *NVDEC) NewLoop() (*NVDECLoop, error) {
	s, err := n.ctx.NewStream()
	if err != nil {
		return nil, err
	}
	l := n.NewLoopOn(s)
	l.ownStream = true
	return l, nil
}

// NewLoopOn makes a loop that copies pictures on s, a stream of NVDEC's
// Context, so that a recycled frame is written only after its readers'
// streams are done. The stream stays the caller's, and the loop runs
// until stopped. The loop copies with the kernels of s's Context
// (NVDECCopyEnv), loaded by the compositor already.
func (n *NVDEC) NewLoopOn(s *Stream) *NVDECLoop {
	l := &NVDECLoop{n: n, stream: s, wake: newLoopWake(), clk: newClocks()}
	if os.Getenv(NVDECCopyEnv) != "each" {
		l.setCopies(n.contextKernels(s.ctx))
	}
	return l
}

// contextKernels returns the copy kernels of c's module, once it is sure
// that c is the context NVDEC works in (both retain the device's primary
// context: the same CUcontext).
func (n *NVDEC) contextKernels(c *Context) (copy8, copy128 unsafe.Pointer, err error) {
	if c.h != n.ctx.h {
		return nil, nil, fmt.Errorf("the loop's stream is of another context (%p) than NVDEC's (%p)", unsafe.Pointer(c.h), unsafe.Pointer(n.ctx.h))
	}
	m, err := c.kernels()
	if err != nil {
		return nil, nil, err
	}
	return unsafe.Pointer(m.copy8), unsafe.Pointer(m.copy128), nil
}

// NVDECLoopStats is where a loop's thread spent its time (wall clock,
// summed over rounds): feeding access units to the parser (which submits
// pictures to the engines from its callbacks), mapping pictures and
// queueing their copies, waiting for the copies (asleep: blocking sync),
// unmapping them.
//
// With NVDECClocksEnv set, the CPU fields say where the thread's CPU time
// went, NVIDIA call by call (thread CPU ns, summed): ParseCPUNs is all of
// cuvidParseVideoData, DecodeCPUNs the cuvidDecodePicture calls its
// callbacks made (part of ParseCPUNs), then cuvidMapVideoFrame64, the
// plane copies queued (CopyMode "each": the cuMemcpy2DAsync calls;
// "batch": the kernel launches, a round's for all its pictures),
// cuvidGetDecodeStatus and cuvidUnmapVideoFrame64. CopyLaunches counts the
// copy kernel's launches ("batch"). Sleeps counts the times the loop slept
// for want of work, WakeWrites the pokes that had to wake it from there
// (the rest found it working and cost no system call).
type NVDECLoopStats struct {
	Rounds, Frames                 int64
	FeedNs, MapNs, WaitNs, UnmapNs int64
	CopyLaunches                   int64
	Sleeps, WakeWrites             int64

	Clocks                                       bool
	ParseCPUNs, DecodeCPUNs, MapCPUNs, CopyCPUNs int64
	StatusCPUNs, UnmapCPUNs                      int64
}

type nvdecStats struct {
	rounds, frames          atomic.Int64
	feed, mapq, wait, unmap atomic.Int64
	launches                atomic.Int64
}

// Stats returns the loop's counters so far.
func (l *NVDECLoop) Stats() NVDECLoopStats {
	s := &l.stats
	st := NVDECLoopStats{Rounds: s.rounds.Load(), Frames: s.frames.Load(), FeedNs: s.feed.Load(), MapNs: s.mapq.Load(), WaitNs: s.wait.Load(), UnmapNs: s.unmap.Load(),
		CopyLaunches: s.launches.Load(), Sleeps: int64(l.wake.sleeps.Load()), WakeWrites: int64(l.wake.writes.Load())}
	if c := l.clk; c != nil { // read while the loop runs: a measurement's figures, not exact to the call
		st.Clocks = true
		st.ParseCPUNs, st.DecodeCPUNs, st.MapCPUNs = int64(c.parse), int64(c.decode), int64(c._map)
		st.CopyCPUNs, st.StatusCPUNs, st.UnmapCPUNs = int64(c.copy), int64(c.status), int64(c.unmap)
	}
	return st
}

// SetName names the loop's thread in /proc (at most 15 bytes are kept), so
// that a reading of per-thread CPU finds it; call it before Run.
func (l *NVDECLoop) SetName(name string) { l.name = name }

// Every makes the loop call fn once a round, on its thread, at least every
// NVDECPoll, until fn returns false or the returned cancel is called:
// housekeeping of a user that has no decoder running (showing black while
// its file cannot be opened). cancel, from any goroutine but the loop's own
// (fn stops itself by returning false), returns once fn is not running and
// will not run again.
func (l *NVDECLoop) Every(fn func() (again bool)) (cancel func()) {
	l.mu.Lock()
	if l.every == nil {
		l.every = map[int]func() bool{}
	}
	id := l.nextFn
	l.nextFn++
	l.every[id] = fn
	l.mu.Unlock()
	l.poke()
	return func() {
		l.mu.Lock()
		delete(l.every, id)
		l.mu.Unlock()
		l.everyMu.Lock() // a round running fn has ended
		l.everyMu.Unlock()
	}
}

// runEvery calls the Every functions once, dropping those that are done.
// runOne runs a function given to Every; one that panics is logged with
// its stack, counted and dropped, and the loop goes on (its owner's own
// recovery, where it has one, has failed its node already).
func (l *NVDECLoop) runOne(fn func() bool) (again bool) {
	defer func() {
		if p := recover(); p != nil {
			panics.From("housekeeping on decode loop "+l.name, p, nil).Log(nil)
			again = false
		}
	}()
	return fn()
}

func (l *NVDECLoop) runEvery() int {
	l.everyMu.Lock()
	defer l.everyMu.Unlock()
	l.mu.Lock()
	ids := l.everyIDs[:0]
	for id := range l.every {
		ids = append(ids, id)
	}
	l.everyIDs = ids
	l.mu.Unlock()
	n := 0
	for _, id := range ids {
		l.mu.Lock()
		fn := l.every[id] // cancelled meanwhile: gone
		l.mu.Unlock()
		if fn == nil {
			continue
		}
		n++
		if !l.runOne(fn) {
			l.mu.Lock()
			delete(l.every, id)
			l.mu.Unlock()
		}
	}
	return n
}

// Add puts a decoder on the loop (before or while it runs).
func (l *NVDECLoop) Add(d *NVDECDecoder) {
	d.loop.Store(l)
	d.c.clk = l.clk
	d.pool.SetNotify(l.poke)
	l.mu.Lock()
	l.decs = append(l.decs, d)
	l.mu.Unlock()
	l.poke()
}

func (l *NVDECLoop) poke() { l.wake.poke() }

// Stop makes Run return after its current round.
func (l *NVDECLoop) Stop() {
	l.stopping.Store(true)
	l.poke()
}

// Run decodes until every decoder has ended or Stop is called, on the
// calling goroutine locked to its OS thread; it then closes every decoder
// and the loop's stream. Failures of one decoder end that decoder only
// (OnEnd says why); the error is the loop's own (its stream failed).
func (l *NVDECLoop) Run() (err error) {
	goruntime.LockOSThread()
	if l.name != "" {
		name := []byte(l.name)
		name = append(name[:min(len(name), 15)], 0)
		unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0)
		// The named thread exits with the loop, never to run other
		// goroutines under that name.
	} else {
		defer goruntime.UnlockOSThread()
	}
	defer l.close()
	// A panic past the decoders' own recovery ends the loop (its decoders
	// closed, each told) as a failed stream does; the process goes on.
	defer func() {
		if p := recover(); p != nil {
			e := panics.From("decode loop "+l.name, p, nil)
			e.Log(nil)
			err = e
		}
	}()
	if err := l.wake.open(); err != nil {
		return err
	}
	if r := C.nvd_current(l.n.lib); r != 0 {
		return l.n.err("cuCtxSetCurrent", r)
	}
	var decs []*NVDECDecoder
	for !l.stopping.Load() {
		housekeeping := l.runEvery()
		l.mu.Lock()
		decs = append(decs[:0], l.decs...)
		l.mu.Unlock()
		progress, live, poll := false, 0, housekeeping > 0
		l.stats.rounds.Add(1)
		t0 := time.Now()
		// Feed every decoder that has shown what it decoded and has a
		// frame to decode into.
		for _, d := range decs {
			if !d.ended && d.stop.Load() {
				d.finish(ErrStopped)
			}
			if d.ended {
				continue
			}
			live++
			if d.c.qlen > 0 || d.sentEOS || d.pool.Available() == 0 {
				continue
			}
			if d.cfg.Ready != nil && !d.cfg.Ready() {
				poll = true
				continue
			}
			fed, err := d.feedSafely()
			if err != nil {
				d.finish(err)
				continue
			}
			if !fed {
				poll = true
				continue
			}
			progress = true
		}
		l.stats.feed.Add(int64(time.Since(t0)))
		// Map what came out, copy it into frames, wait once, unmap.
		n, err := l.collect(decs)
		if err != nil {
			return err
		}
		if n > 0 {
			progress = true
		}
		ended := false
		for _, d := range decs {
			if !d.ended && d.sentEOS && d.c.qlen == 0 {
				d.finish(nil) // every picture of the stream is out
			}
			ended = ended || d.ended
		}
		if ended && !l.ownStream {
			l.dropEnded() // a long-lived loop frees what its users restart
		}
		if live == 0 && !poll {
			l.mu.Lock()
			more := len(l.decs) > len(decs)
			l.mu.Unlock()
			if !more && l.ownStream {
				return nil // a loop of its own decoders ends with them
			}
			if more {
				continue
			}
		}
		if !progress {
			l.idle(poll) // a frame came back to a pool, a decoder was added, Stop, or NVDECPoll passed
		}
	}
	return nil
}

// dropEnded closes the decoders that have ended and takes them off the
// loop.
func (l *NVDECLoop) dropEnded() {
	l.mu.Lock()
	keep := l.decs[:0]
	var gone []*NVDECDecoder
	for _, d := range l.decs {
		if d.ended {
			gone = append(gone, d)
		} else {
			keep = append(keep, d)
		}
	}
	clear(l.decs[len(keep):])
	l.decs = keep
	l.mu.Unlock()
	for _, d := range gone {
		d.close()
	}
}

// idle waits for a poke, or at most NVDECPoll when poll is set.
func (l *NVDECLoop) idle(poll bool) {
	if poll {
		l.wake.sleep(NVDECPoll)
	} else {
		l.wake.sleep(-1)
	}
}

// collect maps the pictures waiting for display (at most the pool's free
// frames and the decoder's output surfaces per decoder), queues their
// copies on the loop's stream (one kernel launch for the round, or copies
// picture by picture: CopyMode), marks device frames written, waits for
// the stream, unmaps and hands the frames on. The pictures of one round
// were handed to the engines together, so waiting for each in turn costs
// about the longest of them.
func (l *NVDECLoop) collect(decs []*NVDECDecoder) (int, error) {
	t0 := time.Now()
	b := l.batch[:0]
	cp := l.copies
	var lerr error // the copies could not be queued: the loop fails
	for _, d := range decs {
		if d.ended || lerr != nil {
			continue
		}
		taken := 0
		for d.c.qlen > 0 && taken < int(d.c.output_surfaces) {
			if cp != nil && cp.a.entries+2 > C.ONAIR_MAX_COPIES {
				if lerr = l.launchCopies(); lerr != nil {
					break
				}
			}
			f, err := l.frame(d)
			if err != nil {
				d.finish(fmt.Errorf("NVDEC decoder %s: %w", d.cfg.ID, err))
				break
			}
			if f == nil {
				break
			}
			var ptr C.ulonglong
			var ts C.longlong
			var pic C.int
			var what *C.char
			if r := C.nvd_map_head(d.c, unsafe.Pointer(l.stream.h), C.ulonglong(f.Plane[0]), C.size_t(f.Pitch), cp, &ptr, &ts, &pic, &what); r != 0 {
				f.Release()
				if ptr != 0 {
					C.nvd_unmap(d.c, ptr)
				}
				d.finish(fmt.Errorf("NVDEC decoder %s: %w", d.cfg.ID, l.n.err(C.GoString(what), r)))
				break
			}
			b = append(b, mapped{d: d, f: f, ts: int64(ts), ptr: ptr, pic: pic})
			taken++
		}
	}
	l.batch = b
	if len(b) == 0 {
		return 0, nil
	}
	if cp != nil && lerr == nil {
		lerr = l.launchCopies()
	}
	if lerr == nil {
		// A frame is written once its copy is done: its event goes after
		// the round's copies on the stream.
		for i := range b {
			b[i].err = b[i].f.MarkWritten(l.stream)
		}
	}
	t1 := time.Now()
	serr := l.stream.Synchronize()
	t2 := time.Now()
	status := l.status[:0]
	for i := range b {
		m := &b[i]
		status = append(status, decodeStatus(C.nvd_status(m.d.c, m.pic)))
		C.nvd_unmap(m.d.c, m.ptr)
	}
	l.status = status
	l.stats.mapq.Add(int64(t1.Sub(t0)))
	l.stats.wait.Add(int64(t2.Sub(t1)))
	l.stats.unmap.Add(int64(time.Since(t2)))
	l.stats.frames.Add(int64(len(b)))
	if lerr != nil || serr != nil {
		for _, m := range b {
			m.f.Release()
		}
		if lerr != nil {
			return 0, lerr
		}
		return 0, serr
	}
	for i := range b {
		m := &b[i]
		f, d := m.f, m.d
		if m.err != nil {
			f.Release()
			d.finish(fmt.Errorf("NVDEC decoder %s: %w", d.cfg.ID, m.err))
			*m = mapped{}
			continue
		}
		pic := NVDECPicture{Index: d.frames, Timestamp: m.ts, Status: status[i]}
		switch pic.Status {
		case "concealed":
			atomic.AddInt64(&d.status[1], 1)
		case "error":
			atomic.AddInt64(&d.status[2], 1)
		default:
			atomic.AddInt64(&d.status[0], 1)
		}
		atomic.AddInt64(&d.frames, 1)
		if d.ended { // failed while its pictures were in flight
			f.Release()
			*m = mapped{}
			continue
		}
		d.cfg.OnFrame(f, pic)
		*m = mapped{}
	}
	return len(b), nil
}

// frame takes a frame of d's pool to copy a picture into on the loop's
// stream (which waits, on the GPU, for the frame's last readers); nil when
// the pool has none free.
func (l *NVDECLoop) frame(d *NVDECDecoder) (*Frame, error) {
	fr, err := d.pool.Get(l.stream)
	if err == ErrExhausted {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if fr.Plane[1] != fr.Plane[0]+DevicePtr(fr.Pitch*fr.Height) {
		fr.Release()
		return nil, errors.New("the frame pool's frames do not hold their chroma rows right after the luma rows")
	}
	return fr, nil
}

// launchCopies queues the copies in the round's table: one launch of the
// copy kernel.
func (l *NVDECLoop) launchCopies() error {
	if l.copies.a.entries == 0 {
		return nil
	}
	l.stats.launches.Add(1)
	if r := C.nvd_copy_launch(l.n.lib, l.copies, unsafe.Pointer(l.stream.h), l.clk); r != 0 {
		return l.n.err("cuLaunchKernel (the decode loop's copies)", r)
	}
	return nil
}

// decodeStatus names a picture's decode status (asked once it is mapped,
// so decoded).
func decodeStatus(st C.int) string {
	switch st {
	case C.NVD_STATUS_CONCEALED:
		return "concealed"
	case C.NVD_STATUS_ERROR:
		return "error"
	}
	return "ok"
}

func (l *NVDECLoop) close() {
	l.mu.Lock()
	decs := l.decs
	l.decs = nil
	l.mu.Unlock()
	for _, d := range decs {
		d.finish(errors.New("the loop stopped"))
		d.close()
	}
	if l.stream != nil && l.ownStream {
		l.stream.Close()
	}
	l.stream = nil
	if l.copies != nil {
		C.free(unsafe.Pointer(l.copies))
		l.copies = nil
	}
	l.wake.close()
}
