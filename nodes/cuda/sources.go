package cuda

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

func init() {
	kinds.Add("upload", (*backend).newUpload)
	kinds.Add("raw_video_file_cuda", (*backend).newRawFile)
	kinds.Add("demux", newRelay)
}

// framesAhead is how many device frames a source may have out at once: the
// edge to its pacer, the one being released, the one each bus shows, and
// the one being filled. The pools grow to what a show needs and stop there.
const framesAhead = 0 // no cap: a pool grows to what the show holds, then recycles

// upload moves host frames to the GPU on a thread of its own, the last
// host node of the hwupload and pinned chains: hwupload copies from
// pageable memory (the driver stages it), pinned copies each picture into
// a page-locked block first and transfers from there on the uploader's
// stream.
type upload struct {
	st     *show.SourceState
	pinned bool
	pool   *gpu.FramePool
	up     *gpu.Uploader
}

func (b *backend) newUpload(st *show.State, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	prm, err := show.Params[struct {
		Mode string `param:"mode"`
	}](&n)
	if err != nil {
		return nil, err
	}
	f, w, h, _, err := st.Video(&n)
	if err != nil {
		return nil, err
	}
	pool, err := gpu.NewFramePool(b.ctx, f, w, h, framesAhead)
	if err != nil {
		return nil, err
	}
	up, err := gpu.NewUploader(pool, gpu.HostWriteCombined)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("node %s: %w", n.ID, err)
	}
	return &upload{st: st.Source(n.Address), pinned: prm.Mode == "pinned", pool: pool, up: up}, nil
}

func (u *upload) Start(ctx *runtime.NodeContext[Frame]) error {
	ctx.Go(func() error {
		for !ctx.Stopping() {
			in, ok := ctx.Take(0, -1)
			if !ok {
				continue
			}
			out, err := u.send(in)
			if err != nil {
				return err
			}
			if ok, _ := ctx.Put(0, out); !ok {
				out.Release()
			}
		}
		return nil
	})
	return nil
}

// send uploads one host picture and lets go of it.
func (u *upload) send(in Frame) (Frame, error) {
	defer in.Release()
	h, ok := in.(*frame.Frame)
	if !ok {
		return nil, fmt.Errorf("upload: its input is a %T, not a host frame", in)
	}
	var d *gpu.Frame
	var err error
	if u.pinned {
		var buf []byte
		if buf, err = u.up.Buffer(); err == nil {
			copy(buf, h.Bytes())
			d, err = u.up.Upload()
		}
	} else {
		d, err = u.up.UploadPageable(h.Bytes())
	}
	if err != nil {
		return nil, err
	}
	d.MetaFrom(h)
	return d, nil
}

func (u *upload) Stop() {
	u.up.Close()
	u.pool.Close()
}

// relay hands frames on, on a thread of its own: demux for a one-stream
// raw file (the seeds' demux thread, kept so input_routing = "demux" costs
// what it cost them) and dec_video in rawvideo mode (a raw packet is a
// picture already).
type relay struct{}

func newRelay(*backend, *show.State, plan.Node, *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	return relay{}, nil
}

func (relay) Start(ctx *runtime.NodeContext[Frame]) error {
	ctx.Go(func() error {
		for !ctx.Stopping() {
			f, ok := ctx.Take(0, -1)
			if !ok {
				continue
			}
			if ok, _ := ctx.Put(0, f); !ok {
				f.Release()
			}
		}
		return nil
	})
	return nil
}

func (relay) Stop() {}

// rawConfig is the geometry of a raw source's file: the format and size
// its upload (the next nodes) declares, the show's rate.
func rawConfig(st *show.State, n plan.Node, path string, loop bool, colour frame.Colour) (media.RawFileConfig, error) {
	// A raw file's reader does not declare the picture: the chain's upload
	// or the show does. The plan stamps format and size on the upload's
	// frames; the show's are the defaults.
	f, w, h, rate, err := st.Video(&n)
	if err != nil {
		return media.RawFileConfig{}, err
	}
	if path == "" {
		return media.RawFileConfig{}, fmt.Errorf("node %s: no path", n.ID)
	}
	return media.RawFileConfig{ID: n.Address, Path: st.Resolve(path), Format: f, Width: w, Height: h, Rate: rate,
		Colour: colour.Or(frame.BT709), Loop: loop}, nil
}

// rawFile is raw_video_file_cuda: a raw NV12/P010 file read into
// page-locked memory and transferred to the GPU, without a thread of its
// own. It runs on its source's pacing loop and makes the next picture
// whenever its edge has room:
//
//   - resident holds the whole file in one page-locked block; each picture
//     is read the first time it is shown, later passes only transfer (the
//     transfer is queued from the loop: nothing waits). The file is read
//     again when its size or mtime changes.
//   - direct holds one picture of page-locked memory; the read is handed to
//     the backend's small pool of reader threads (a read of a 1080p frame
//     can take a millisecond, too long for a pacing loop), which queue the
//     transfer and hand the frame back to the loop.
type rawFile struct {
	b      *backend
	st     *show.SourceState
	id     string
	cfg    media.RawFileConfig
	mode   string
	pool   *gpu.FramePool
	up     *gpu.Uploader
	size   int            // bytes of one picture
	fb     *show.Fallback // black or hold, and the retries (the loop's)
	last   *gpu.Frame     // the last good picture, retained for hold
	log    func(msg string, args ...any)
	failed func(error)

	// resident
	block  *gpu.HostMemory
	loaded []bool
	stamp  fileStamp

	// direct: the frame the reader pool made, for the loop to send
	done    *runtime.Signal
	mu      sync.Mutex
	reads   sync.WaitGroup // the read under way, which Stop waits for
	ready   Frame
	readErr error
	reading bool

	file    *os.File
	frames  int64
	n       int64 // the next picture's number (counts on across loops)
	pending Frame // made, not yet taken by the edge
}

type fileStamp struct {
	size  int64
	mtime time.Time
}

func (b *backend) newRawFile(st *show.State, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	prm, err := show.Params[struct {
		Mode    string       `param:"mode"`
		Path    string       `param:"path"`
		Loop    bool         `param:"loop"`
		Colour  frame.Colour `param:"colour"`
		OnError string       `param:"on_error"`
	}](&n)
	if err != nil {
		return nil, err
	}
	cfg, err := rawConfig(st, n, prm.Path, prm.Loop, prm.Colour)
	if err != nil {
		return nil, err
	}
	pool, err := gpu.NewFramePool(b.ctx, cfg.Format, cfg.Width, cfg.Height, framesAhead)
	if err != nil {
		return nil, err
	}
	up, err := gpu.NewUploader(pool, 0)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("node %s: %w", n.ID, err)
	}
	r := &rawFile{b: b, st: st.Source(n.Address), id: n.ID, cfg: cfg, mode: prm.Mode, pool: pool, up: up, size: cfg.Format.Size(cfg.Width, cfg.Height),
		fb: show.NewFallback(st.Source(n.Address), prm.OnError, "its file is usable")}
	if r.mode == "direct" {
		if r.done, err = runtime.NewSignal(); err != nil {
			r.Stop()
			return nil, err
		}
		b.startReaders()
	}
	return r, nil
}

func (r *rawFile) Start(ctx *runtime.NodeContext[Frame]) error {
	if ctx.Loop() == nil {
		return fmt.Errorf("node %s: raw_video_file_cuda runs on its source's pacing loop; the plan gives it a thread", r.id)
	}
	r.n = int64(r.st.Produced.Load()) // a restart counts on
	r.log = ctx.Log.Error
	r.failed = func(err error) { r.fb.Fail(ctx.Log, ctx.Stats, err) }
	if _, err := ctx.Watch(ctx.Outputs[0].Consumed(), func(reg *runtime.Registration) {
		r.fill(ctx)
		reg.Rearm()
	}); err != nil {
		return err
	}
	if r.done != nil {
		if _, err := ctx.Watch(r.done, func(reg *runtime.Registration) {
			r.fill(ctx)
			reg.Rearm()
		}); err != nil {
			return err
		}
	}
	r.fill(ctx)
	return nil
}

// fill sends pictures while the edge has room.
func (r *rawFile) fill(ctx *runtime.NodeContext[Frame]) {
	for !ctx.Stopping() {
		if r.pending == nil {
			var f Frame
			var err error
			if r.fb.Due() {
				f, err = r.next()
			} else {
				err = errRetryLater // failing: black (or held) until the next try
			}
			if errors.Is(err, io.EOF) {
				return // a file that does not loop has ended
			}
			if err != nil {
				if err != errRetryLater {
					r.failed(err)
				}
				if f, err = r.black(); err != nil {
					ctx.Fail(err)
					return
				}
			} else if r.fb.Hold && f != nil {
				r.keep(f.(*gpu.Frame))
			}
			if f == nil {
				return // direct: a read is under way; its signal calls again
			}
			r.pending = f
		}
		ok, err := ctx.Put(0, r.pending)
		if errors.Is(err, runtime.ErrWouldBlock) {
			return // full: the Consumed watch calls again
		}
		if !ok {
			r.pending.Release()
		}
		r.pending = nil
		if err != nil {
			return
		}
	}
}

// errRetryLater stands for the picture of a source that failed and tries
// its file again only at show.RetryEvery.
var errRetryLater = errors.New("retry later")

// next makes the next picture: at once (resident), or a read finished by
// the reader pool (direct; nil while it runs).
func (r *rawFile) next() (Frame, error) {
	if r.mode == "resident" {
		return r.nextResident()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ready != nil || r.readErr != nil {
		f, err := r.ready, r.readErr
		r.ready, r.readErr = nil, nil
		if err == nil {
			r.fb.Recovered()
		}
		r.request()
		return f, err
	}
	r.request()
	return nil, nil
}

// request hands the next read to the pool unless one is under way (r.mu
// held).
func (r *rawFile) request() {
	if r.reading {
		return
	}
	r.reading = true
	r.reads.Add(1)
	n := r.n
	r.n++
	r.st.Produced.Add(1)
	r.b.readers.submit(func() {
		var f Frame
		// On a reader thread: a panic is this read's error (the source
		// shows black or holds, and tries again), never the process's.
		err := panics.Run("reading "+r.cfg.Path, r.b.log, func() (err error) {
			f, err = r.readDirect(n)
			return err
		})
		r.mu.Lock()
		r.ready, r.readErr, r.reading = f, err, false
		r.mu.Unlock()
		r.reads.Done()
		r.done.Notify()
	})
}

// open opens the file (again, when it changed) and counts its pictures.
func (r *rawFile) open() error {
	st, err := os.Stat(r.cfg.Path)
	if err != nil {
		return err
	}
	stamp := fileStamp{st.Size(), st.ModTime()}
	if r.file != nil && stamp == r.stamp {
		return nil
	}
	if st.Size() < int64(r.size) {
		return fmt.Errorf("%s holds %d bytes, less than one %dx%d %v picture (%d bytes)", r.cfg.Path, st.Size(), r.cfg.Width, r.cfg.Height, r.cfg.Format, r.size)
	}
	f, err := os.Open(r.cfg.Path)
	if err != nil {
		return err
	}
	if r.file != nil {
		r.file.Close()
		r.log("raw file changed: reading it again", "path", r.cfg.Path)
	}
	r.file, r.stamp, r.frames = f, stamp, st.Size()/int64(r.size)
	if r.mode == "resident" {
		if r.block != nil {
			r.up.Stream().Synchronize() // no transfer reads the old block any more
			r.block.Free()
			r.block = nil
		}
		if r.block, err = r.b.ctx.HostAlloc(int(r.frames)*r.size, 0); err != nil {
			return fmt.Errorf("resident %s: %w", r.cfg.Path, err)
		}
		r.loaded = make([]bool, r.frames)
	}
	return nil
}

// picture is the file's picture for frame number n, and false when a file
// that does not loop has ended.
func (r *rawFile) picture(n int64) (int64, bool) {
	if n >= r.frames && !r.cfg.Loop {
		return 0, false
	}
	return n % r.frames, true
}

func (r *rawFile) stampFrame(d *gpu.Frame, n int64) Frame {
	d.PTS, d.TimeBase, d.SourceFrame = n, r.cfg.Rate.Inverse(), n
	d.Colour, d.Source = r.cfg.Colour, r.cfg.ID
	return d
}

func (r *rawFile) nextResident() (Frame, error) {
	if err := r.open(); err != nil {
		return nil, err
	}
	i, ok := r.picture(r.n)
	if !ok {
		return nil, io.EOF
	}
	off := i * int64(r.size)
	if !r.loaded[i] {
		if _, err := r.file.ReadAt(r.block.Bytes()[off:off+int64(r.size)], off); err != nil {
			return nil, fmt.Errorf("reading picture %d of %s: %w", i, r.cfg.Path, err)
		}
		r.loaded[i] = true
	}
	d, err := r.up.UploadFrom(r.block, int(off))
	if err != nil {
		return nil, err
	}
	f := r.stampFrame(d, r.n)
	r.n++
	r.st.Produced.Add(1)
	r.fb.Recovered()
	return f, nil
}

// keep retains f as the last good picture (on_error = "hold").
func (r *rawFile) keep(f *gpu.Frame) {
	f.Retain()
	if r.last != nil {
		r.last.Release()
	}
	r.last = f
}

// black is what the source sends while its file is unusable, so the buses
// keep their deadlines: a black picture, or with on_error = "hold" a copy
// of the last good one (on the GPU: a device-to-device copy; the copy, not
// the kept frame, goes on, as the pacer restamps what it sends). The file
// is tried again for the next picture.
func (r *rawFile) black() (Frame, error) {
	d, err := fallbackFrame(r.pool, r.up.Stream(), r.last, r.fb.Hold)
	if err != nil {
		return nil, err
	}
	f := r.stampFrame(d, r.n)
	r.n++
	r.st.Produced.Add(1)
	return f, nil
}

// fallbackFrame is what a source sends while it has no picture of its
// own: a frame of pool written on s, black, or with hold a device-to-device
// copy of last (when there is one).
func fallbackFrame(pool *gpu.FramePool, s *gpu.Stream, last *gpu.Frame, hold bool) (*gpu.Frame, error) {
	d, err := pool.Get(s)
	if err != nil {
		return nil, err
	}
	if hold && last != nil {
		err = last.WaitWritten(s)
		for p := 0; p < 2 && err == nil; p++ {
			err = s.Copy2D(gpu.DeviceRegion(d.Plane[p], d.Pitch), gpu.DeviceRegion(last.Plane[p], last.Pitch), d.RowBytes(), d.Height>>p)
		}
		if err == nil {
			err = d.MarkWritten(s)
		}
	} else {
		err = d.Fill(s)
	}
	if err != nil {
		d.Release()
		return nil, err
	}
	return d, nil
}

// readDirect runs on a reader thread: pread picture n into the uploader's
// page-locked block, then queue its transfer.
func (r *rawFile) readDirect(n int64) (Frame, error) {
	if err := r.open(); err != nil {
		return nil, err
	}
	i, ok := r.picture(n)
	if !ok {
		return nil, io.EOF
	}
	buf, err := r.up.Buffer() // waits (sleeping) for the previous transfer out of it
	if err != nil {
		return nil, err
	}
	if _, err := r.file.ReadAt(buf[:r.size], i*int64(r.size)); err != nil {
		return nil, fmt.Errorf("reading picture %d of %s: %w", i, r.cfg.Path, err)
	}
	d, err := r.up.Upload()
	if err != nil {
		return nil, err
	}
	return r.stampFrame(d, n), nil
}

func (r *rawFile) Stop() {
	if r.pending != nil {
		r.pending.Release()
		r.pending = nil
	}
	r.reads.Wait() // the pool's read must not outlive the uploader
	r.mu.Lock()
	if r.ready != nil {
		r.ready.Release()
		r.ready = nil
	}
	r.mu.Unlock()
	if r.last != nil {
		r.last.Release()
		r.last = nil
	}
	if r.up != nil {
		r.up.Close()
	}
	if r.block != nil {
		r.block.Free()
	}
	if r.pool != nil {
		r.pool.Close()
	}
	if r.file != nil {
		r.file.Close()
	}
	if r.done != nil {
		r.done.Close()
	}
}
