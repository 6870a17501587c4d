package cuda

// NVDEC in the CUDA backend. HEVC and H.264 sources decode on NVDEC
// decode loops (cuda.NVDECLoop): a few threads, each feeding the engines
// for many streams, named in the plan ("decode_N", kind nvdec). Two kinds
// run there:
//
//   - nvdec_file (input_routing = "input"): the loop reads the file's access
//     units itself (package es) and hands them straight to the parser: no
//     reader thread, no packet queue.
//     With its param parser = "onair" (canvas nvdec_parser) an HEVC file
//     is parsed by onair's own parser (package cuda/hevc) instead of
//     NVIDIA's.
//   - dec_video in mode nvdec: the access units come over its input edge
//     from input_rec (or its demuxer, input_routing = "demux"). On a shared
//     decode loop it looks at its edge each round (at least every
//     cuda.NVDECPoll); placed on a thread of its own (decoder_placement =
//     "thread", the seeds' layout) it has a loop of its own and waits on the
//     edge.
//
// Pictures are copied into device frames of the source's FramePool, which
// the buses read as they read uploads. A decoder whose frames its pacer
// has not taken yet holds them and is not fed until they are gone. Trouble
// never stops the show: a file that is missing, is not what the source
// declares, or whose decoding fails is reported, the source sends black
// (or its last good picture, on_error = "hold") at the pace its edge takes
// them, and the file is tried again every second.

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onairhq/onair/audio"
	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/es"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

func init() {
	kinds.Add("input_rec", (*backend).newInputRec)
	kinds.Add("dec_video", (*backend).newDecoder)
	kinds.Add("nvdec_file", (*backend).newNVDECSource)
	fileChain := []nodes.Link{nodes.L("input_rec"), nodes.L("demux"), nodes.L("dec_video", "mode", "nvdec"), nodes.L("realtime"), nodes.L("one_to_many")}
	Lowering.Lower("hevc_file", nodes.Chain{Links: fileChain})
	Lowering.Lower("h264_file", nodes.Chain{Links: fileChain})
	Lowering.Lower("raw_file", nodes.Chain{Links: []nodes.Link{
		nodes.L("input_rec", "streams", 1), nodes.L("demux", "streams", 1), {Kind: "dec_video", Params: map[string]any{"mode": "rawvideo"}, Host: true},
		nodes.L("upload", "mode", "hwupload"), nodes.L("realtime"), nodes.L("one_to_many"),
	}})
}

// decodeLoop is one NVDEC loop the backend runs: its thread, its stream.
type decodeLoop struct {
	loop   *gpu.NVDECLoop
	stream *gpu.Stream
	done   chan struct{}
}

// nvdecLib opens NVDEC once per run.
func (b *backend) nvdecLib() (*gpu.NVDEC, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.nvdec == nil {
		n, err := gpu.OpenNVDEC(b.ctx)
		if err != nil {
			return nil, err
		}
		b.nvdec = n
	}
	return b.nvdec, nil
}

// decodeLoop returns the named decode loop, starting it the first time.
func (b *backend) decodeLoop(name string) (*decodeLoop, error) {
	lib, err := b.nvdecLib()
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if l := b.loops[name]; l != nil {
		return l, nil
	}
	s, err := b.ctx.NewStream()
	if err != nil {
		return nil, err
	}
	l := &decodeLoop{loop: lib.NewLoopOn(s), stream: s, done: make(chan struct{})}
	l.loop.SetName(runtime.ThreadName(name)) // onair-decode_N: the plan's loop, as bench groups it
	go func() {
		defer close(l.done)
		if err := l.loop.Run(); err != nil {
			b.log.Error("decode loop failed", "loop", name, "error", err)
		}
	}()
	b.loops[name] = l
	return l, nil
}

// decodeLoopStatus reads every decode loop's counters, in name order.
func (b *backend) decodeLoopStatus() []DecodeLoopStatus {
	b.mu.Lock()
	out := make([]DecodeLoopStatus, 0, len(b.loops))
	loops := make([]*gpu.NVDECLoop, 0, len(b.loops))
	for name, l := range b.loops {
		out = append(out, DecodeLoopStatus{Loop: name})
		loops = append(loops, l.loop)
	}
	b.mu.Unlock()
	for i, l := range loops {
		st := l.Stats()
		ls := &out[i]
		ls.Pictures, ls.Rounds, ls.FeedNs, ls.MapNs, ls.WaitNs, ls.UnmapNs = st.Frames, st.Rounds, st.FeedNs, st.MapNs, st.WaitNs, st.UnmapNs
		ls.Sleeps, ls.WakeWrites = st.Sleeps, st.WakeWrites
		if st.Clocks {
			ls.CPU = &DecodeCPU{Parse: st.ParseCPUNs, Decode: st.DecodeCPUNs, Map: st.MapCPUNs, Copy: st.CopyCPUNs, Status: st.StatusCPUNs, Unmap: st.UnmapCPUNs}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Loop < out[j].Loop })
	return out
}

// stop ends a decode loop and waits for its thread.
func (l *decodeLoop) stop() {
	l.loop.Stop()
	<-l.done
	l.stream.Close()
}

// packet is an access unit on an edge of the CUDA backend (input_rec →
// demux → dec_video): its bytes, reused through its reader's free list.
type packet struct {
	data []byte
	meta frame.Meta
	refs atomic.Int32
	free *packetPool
}

func (p *packet) Retain()               { p.refs.Add(1) }
func (p *packet) Metadata() *frame.Meta { return &p.meta }
func (p *packet) Release() {
	if p.refs.Add(-1) == 0 {
		p.free.put(p)
	}
}

type packetPool struct {
	mu   sync.Mutex
	free []*packet
}

func (pp *packetPool) get(data []byte) *packet {
	pp.mu.Lock()
	var p *packet
	if n := len(pp.free); n > 0 {
		p = pp.free[n-1]
		pp.free = pp.free[:n-1]
	}
	pp.mu.Unlock()
	if p == nil {
		p = &packet{free: pp}
	}
	p.data = append(p.data[:0], data...)
	p.meta = frame.Meta{}
	p.refs.Store(1)
	return p
}

func (pp *packetPool) put(p *packet) {
	pp.mu.Lock()
	pp.free = append(pp.free, p)
	pp.mu.Unlock()
}

// streamReader plays an HEVC or H.264 file's access units, pass after pass
// when looping, checked against what the source declares: the first pass
// from the file, the later ones from its recording (es.Recordings).
type streamReader struct {
	recordings *es.Recordings
	path       string
	codec      es.Codec
	format     frame.Format
	w, h       int
	loop       bool

	rd       *es.Stream
	info     es.Info
	pictures int // pictures in the current pass
	pass     int // pictures in the first pass, once it was read whole (0 before)
	warn     func(string)
}

func (r *streamReader) open() error {
	rd, err := r.recordings.Open(r.path, r.codec, r.loop)
	if err != nil {
		return err
	}
	info, _ := rd.Info()
	if err := media.CheckStream(r.path, info, r.format, r.w, r.h); err != nil {
		rd.Close()
		return err
	}
	r.rd, r.info, r.pictures, r.pass = rd, info, 0, 0
	return nil
}

// next returns the next access unit; io.EOF after the last of a stream
// that does not loop. A change of size or format inside the stream ends
// the pass there, with a warning.
func (r *streamReader) next() (es.AccessUnit, error) {
	for range 2 {
		au, err := r.rd.Next()
		if err == nil && au.Info != nil && !au.Info.SameFormat(r.info) {
			r.warn(fmt.Sprintf("%s changes from %v to %v at access unit %d (byte %d): onair refuses a change of size or format inside a stream, and plays the stream up to there", r.path, r.info, *au.Info, au.Index, au.Offset))
			err = io.EOF
		}
		if err == nil && au.Info == nil && au.SPSError != nil {
			r.warn(media.UnusableSPS(r.path, au))
			err = io.EOF
		}
		if err != io.EOF {
			if err == nil && au.Pictures {
				r.pictures++
			}
			return au, err
		}
		if !r.loop {
			return es.AccessUnit{}, io.EOF
		}
		if r.pictures == 0 {
			return es.AccessUnit{}, fmt.Errorf("%s: a pass of the stream holds no picture to show", r.path)
		}
		if err := r.rd.Rewind(); err != nil {
			return es.AccessUnit{}, fmt.Errorf("%s: starting the loop again: %w", r.path, err)
		}
		if r.pass == 0 {
			r.pass = r.pictures
		}
		r.pictures = 0
	}
	return es.AccessUnit{}, fmt.Errorf("%s: the stream ended at its start", r.path)
}

func (r *streamReader) close() {
	if r.rd != nil {
		r.rd.Close()
		r.rd = nil
	}
}

// packetReader is input_rec for an HEVC or H.264 file on the CUDA
// backend: the seeds' reader thread, handing access units on its edge.
type packetReader struct {
	st   *show.SourceState
	r    streamReader
	pool packetPool
	keys frame.StampSet
}

func (b *backend) newInputRec(st *show.State, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	prm, err := show.Params[struct {
		Codec string `param:"codec"`
	}](&n)
	if err != nil {
		return nil, err
	}
	if prm.Codec == "" { // a raw file
		return show.HostRawFile[Frame](st, n, ctx)
	}
	r, err := b.streamOf(st, &n)
	if err != nil {
		return nil, err
	}
	keys, err := stampKeys(&n)
	if err != nil {
		return nil, err
	}
	return &packetReader{st: st.Source(n.Address), r: r, keys: keys}, nil
}

// stampKeys reads the moments a node stamps (timestamp_keys, as the
// frame metadata fusion left them: none unless the show asks).
func stampKeys(n *plan.Node) (frame.StampSet, error) {
	prm, err := show.Params[struct {
		Keys []string `param:"timestamp_keys"`
	}](n)
	if err != nil {
		return 0, err
	}
	s, err := frame.StampSetOf(prm.Keys)
	if err != nil {
		return 0, fmt.Errorf("node %s: %v", n.ID, err)
	}
	return s, nil
}

// streamOf reads a node's codec, format and size, and the file and loop
// of a node that reads one (not dec_video: its access units arrive).
func (b *backend) streamOf(st *show.State, n *plan.Node) (streamReader, error) {
	c, err := show.Params[struct {
		Codec string `param:"codec"`
	}](n)
	if err != nil {
		return streamReader{}, err
	}
	type file struct {
		Path string `param:"path"`
		Loop bool   `param:"loop"`
	}
	var in file
	if n.Kind != "dec_video" {
		if in, err = show.Params[file](n); err != nil {
			return streamReader{}, err
		}
	}
	codec, err := es.ParseCodec(c.Codec)
	if err != nil {
		return streamReader{}, fmt.Errorf("node %s: %v", n.ID, err)
	}
	f, w, h, _, err := st.Video(n)
	if err != nil {
		return streamReader{}, err
	}
	return streamReader{recordings: &b.recordings, path: st.Resolve(in.Path), codec: codec, format: f, w: w, h: h, loop: in.Loop}, nil
}

func (p *packetReader) Start(ctx *runtime.NodeContext[Frame]) error {
	p.r.warn = func(msg string) {
		ctx.Stats.Errors.Add(1)
		if p.st.Fail(errors.New(msg)) {
			ctx.Log.Warn("reading goes on", "warning", msg)
		}
	}
	ctx.Go(func() error {
		defer p.r.close()
		for !ctx.Stopping() {
			if p.r.rd == nil {
				if err := p.r.open(); err != nil {
					ctx.Stats.Errors.Add(1)
					if p.st.Fail(err) {
						ctx.Log.Error("the source waits for its file", "error", err)
					}
					ctx.Done().Wait(ctx.Stopping, time.Second)
					continue
				}
			}
			au, err := p.r.next()
			if err == io.EOF {
				ctx.Log.Info("file ended", "path", p.r.path)
				ctx.Done().Wait(ctx.Stopping, -1)
				return nil
			}
			if err != nil {
				p.r.warn(err.Error())
				p.r.close()
				continue
			}
			pk := p.pool.get(au.Data)
			pk.meta.PTS, pk.meta.SourceFrame = au.Index, au.Index
			if p.keys.Has(frame.InputRecTime) {
				pk.meta.Stamps.Stamp(frame.InputRecTime, time.Now().UnixNano())
			}
			if ok, _ := ctx.Put(0, pk); !ok {
				pk.Release()
			}
		}
		return nil
	})
	return nil
}

func (p *packetReader) Stop() {}

// nvdecSource is nvdec_file and dec_video (nvdec) on a decode loop.
type nvdecSource struct {
	b        *backend
	st       *show.SourceState
	id       string
	fromEdge bool // dec_video: access units from input 0
	own      bool // a loop of its own (a thread-placed dec_video)
	ownParse bool // nvdec_file with parser = "onair": cuda/hevc parses HEVC
	// feed: live_nvdec's access units, from a live transport (live.go).
	feed *liveFeed
	// soundFile is the file whose sound track the source plays ("" none).
	soundFile string
	loopName  string
	r         streamReader
	rate      frame.Rational
	cadence   audio.Cadence // each picture's samples of its sound
	col       frame.Colour
	fb        *show.Fallback // black or hold, and the retries (the loop's thread)
	surfaces  int
	keys      frame.StampSet
	// readAt is when each of the last access units was read (input_rec_time),
	// by its index: the parser hands a picture back with its unit's index.
	readAt [64]int64

	ctx    *runtime.NodeContext[Frame]
	pool   *gpu.FramePool
	dl     *decodeLoop
	out    *runtime.Edge[Frame]
	stopMu sync.Mutex
	ended  chan struct{} // closed when the running decoder has ended

	// On the loop's thread only:
	// snd is the source's sound track (media.FileSound, as the CPU's
	// ffmpeg_decode plays it): nvdec_file's file, or dec_video's
	// input_rec's (its passes told by the access units' index starting
	// again at 0: fed counts them). nil for a source without a file.
	snd     *media.FileSound
	sndOpen bool // snd is open for the decoder starting or running
	fed     int64
	dec     *gpu.NVDECDecoder
	pending []*gpu.Frame // decoded, waiting for room on the edge
	n       int64        // pictures handed on
	last    *gpu.Frame   // the last good picture (hold)
	pk      Frame        // the packet being parsed (dec_video)
	cancel  func()       // the housekeeping while failing (stopMu)
	stopped bool         // Stop was called (stopMu)
}

// nvdecSourceParams are the params an NVDEC source node reads, from a
// file (nvdec_file) or a live stream (live_nvdec).
type nvdecSourceParams struct {
	Colour   frame.Colour `param:"colour"`
	OnError  string       `param:"on_error"`
	Surfaces int          `param:"surfaces"`
}

func (b *backend) newNVDECSource(st *show.State, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	prm, err := show.Params[nvdecSourceParams](&n)
	if err != nil {
		return nil, err
	}
	r, err := b.streamOf(st, &n)
	if err != nil {
		return nil, err
	}
	_, _, _, rate, err := st.Video(&n)
	if err != nil {
		return nil, err
	}
	keys, err := stampKeys(&n)
	if err != nil {
		return nil, err
	}
	cad, err := audio.NewCadence(rate.Num, rate.Den)
	if err != nil {
		return nil, fmt.Errorf("node %s: %v", n.ID, err)
	}
	s := &nvdecSource{keys: keys, cadence: cad, b: b, st: st.Source(n.Address), id: n.Address, r: r, rate: rate, col: prm.Colour.Or(frame.BT709),
		fb: show.NewFallback(st.Source(n.Address), prm.OnError, "its file can be decoded"), surfaces: prm.Surfaces, loopName: n.Placement.Loop}
	if n.Kind == "dec_video" {
		s.fromEdge = true
		if n.Placement.Thread || s.loopName == "" {
			s.own, s.loopName = true, n.ID
		}
	} else if s.r.path == "" {
		return nil, fmt.Errorf("node %s: no path", n.ID)
	} else if s.ownParse, err = ownParser(&n); err != nil {
		return nil, err
	}
	if s.st == nil { // a dec_video's state is its source's
		return nil, fmt.Errorf("node %s: no source %s in the show", n.ID, n.Address)
	}
	if s.soundFile = s.r.path; s.fromEdge {
		s.soundFile = st.SourceFile(n.Address)
	}
	return s, nil
}

// ownParser reads an nvdec_file's parser (canvas nvdec_parser): true for
// onair's own, false for NVIDIA's.
func ownParser(n *plan.Node) (bool, error) {
	prm, err := show.Params[struct {
		Parser string `param:"parser"`
	}](n)
	if err != nil {
		return false, err // an unknown value names the node, the param and the values it may take
	}
	return prm.Parser == "onair", nil
}

// newDecoder makes dec_video: rawvideo relays raw pictures; nvdec decodes
// HEVC and H.264 on a decode loop.
func (b *backend) newDecoder(st *show.State, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	prm, err := show.Params[struct {
		Mode string `param:"mode"`
	}](&n)
	if err != nil {
		return nil, err
	}
	if prm.Mode == "rawvideo" {
		return relay{}, nil
	}
	return b.newNVDECSource(st, n, ctx)
}

func (s *nvdecSource) Start(ctx *runtime.NodeContext[Frame]) error {
	s.ctx = ctx
	if len(ctx.Outputs) != 1 {
		return fmt.Errorf("node %s: %d outputs, want 1", ctx.ID(), len(ctx.Outputs))
	}
	s.out = ctx.Outputs[0]
	s.r.warn = s.warn
	if path := s.soundFile; path != "" {
		s.snd = media.NewFileSound(path, s.cadence, &s.st.SoundLate, s.warn)
	}
	var err error
	if s.pool, err = gpu.NewFramePool(s.b.ctx, s.r.format, s.r.w, s.r.h, s.poolFrames()); err != nil {
		return fmt.Errorf("node %s: %w", ctx.ID(), err)
	}
	if s.own {
		lib, err := s.b.nvdecLib()
		if err != nil {
			return fmt.Errorf("node %s: %w", ctx.ID(), err)
		}
		st, err := s.b.ctx.NewStream()
		if err != nil {
			return err
		}
		s.dl = &decodeLoop{loop: lib.NewLoopOn(st), stream: st, done: make(chan struct{})}
		s.dl.loop.SetName(runtime.ThreadName("nvdec")) // a decoder's own loop
		go func() {
			defer close(s.dl.done)
			if err := s.dl.loop.Run(); err != nil {
				ctx.Fail(err)
			}
		}()
	} else if s.dl, err = s.b.decodeLoop(s.loopName); err != nil {
		return fmt.Errorf("node %s: %w", ctx.ID(), err)
	}
	if s.feed != nil {
		if err := s.feed.start(); err != nil {
			return fmt.Errorf("source %s: %w", s.id, err)
		}
	}
	// The first decoder starts on the loop's thread, as every later one.
	s.housekeep()
	return nil
}

// poolFrames caps the source's device frames: its edge, the pacer's
// current and next picture, the one each bus shows, the one being written
// and the display delay's.
func (s *nvdecSource) poolFrames() int {
	n := s.out.Config().Capacity + 6 + gpu.NVDECDisplayDelay
	if s.feed != nil {
		n += liveSyncDepth
	}
	return n
}

// housekeep has the loop run tick each round until a decoder runs.
func (s *nvdecSource) housekeep() {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if s.cancel == nil && !s.stopped {
		s.cancel = s.dl.loop.Every(s.tick)
	}
}

// tick runs on the loop's thread while the source has no decoder: it tries
// the file again every retry, and meanwhile sends black (or the held
// picture) whenever its edge has room. It reports false once a decoder
// runs (the loop stops calling it).
func (s *nvdecSource) tick() bool {
	// On the decode loop: a panic fails this source only (and ends the tick).
	defer panics.Catch("a decode loop's housekeeping", nil, s.ctx.Fail)
	if s.ctx.Stopping() || !s.flush() {
		return true
	}
	if s.feed != nil && !s.fb.Failing() {
		if err := s.feed.lost(time.Now()); err != nil {
			s.report(err)
		}
	}
	if s.dec == nil && (s.feed == nil && s.fb.Due() || s.feed != nil && s.feed.begun()) && s.soundReady() {
		if err := s.startDecoder(); err != nil {
			s.report(err)
		} else {
			s.stopMu.Lock()
			s.cancel = nil
			s.stopMu.Unlock()
			return false
		}
	}
	if s.fb.Failing() && s.out.Len() < s.out.Config().Capacity {
		f, err := s.fallback()
		if err != nil {
			s.ctx.Fail(err)
			return true
		}
		if s.feed != nil {
			s.feed.ls.ErrorFrames.Add(1)
		}
		s.hand(f)
	}
	return true
}

func (s *nvdecSource) startDecoder() error {
	if s.feed != nil {
		s.r.codec, s.feed.next = s.feed.next.codec, nil
	} else if !s.fromEdge {
		if err := s.r.open(); err != nil {
			return err
		}
	}
	codec := gpu.NVDECHEVC
	if s.r.codec == es.H264 {
		codec = gpu.NVDECH264
	}
	// nvdec_file of HEVC with parser = "onair": onair's own HEVC parser
	// feeds the engine, not NVIDIA's.
	own := codec == gpu.NVDECHEVC && !s.fromEdge && s.ownParse
	ended := make(chan struct{})
	ready := s.flush
	if s.feed != nil { // a live stream is not held back: its oldest pictures give way (hand)
		ready = func() bool { s.flush(); return true }
	}
	dec, err := s.b.nvdec.NewDecoder(gpu.NVDECConfig{
		ID: s.id, Codec: codec, Format: s.r.format, Width: s.r.w, Height: s.r.h, OwnParser: own,
		DisplayDelay: gpu.NVDECDisplayDelay, ExtraSurfaces: s.surfaces, Frames: s.pool,
		Source: s.source, Ready: ready, OnFrame: s.onFrame,
		OnEnd: func(err error) { s.onEnd(err); close(ended) },
	})
	if err != nil {
		s.r.close()
		return err
	}
	s.stopMu.Lock()
	s.dec, s.ended = dec, ended
	s.stopMu.Unlock()
	s.dl.loop.Add(dec)
	return nil
}

// soundReady opens the source's sound track as its decoder is due to start
// (dec_video's goes on through a restart) and reports whether its first
// samples are decoded: the decoder starts a later round, so the pictures
// start with their sound and the loop never waits for ffmpeg.
func (s *nvdecSource) soundReady() bool {
	if s.snd == nil {
		return true
	}
	if !s.sndOpen && (!s.fromEdge || s.fed == 0) {
		s.snd.Open()
		s.sndOpen = true
	}
	return s.snd.Started()
}

// source feeds the decoder its next access unit.
func (s *nvdecSource) source() (gpu.NVDECUnit, error) {
	if s.pk != nil {
		s.pk.Release()
		s.pk = nil
	}
	if s.feed != nil {
		p, err := s.feed.unit()
		if p == nil {
			return gpu.NVDECUnit{}, err // nothing yet, or the connection's end
		}
		s.pk = p
		return gpu.NVDECUnit{Data: p.data, Timestamp: p.meta.PTS}, nil
	}
	if !s.fromEdge {
		au, err := s.r.next()
		if err == nil && s.keys.Has(frame.InputRecTime) {
			s.readAt[au.Index%int64(len(s.readAt))] = time.Now().UnixNano()
		}
		return gpu.NVDECUnit{Data: au.Data, NALs: au.NALs, Timestamp: au.Index}, err
	}
	var pk Frame
	var ok bool
	if s.own {
		pk, ok = s.ctx.Take(0, 20*time.Millisecond)
	} else {
		pk, ok = s.ctx.Get(0)
	}
	if !ok {
		return gpu.NVDECUnit{}, nil // nothing yet: the loop looks again
	}
	p, isPacket := pk.(*packet)
	if !isPacket {
		pk.Release()
		return gpu.NVDECUnit{}, fmt.Errorf("its input carried a %T, not an access unit", pk)
	}
	s.pk = p
	if p.meta.PTS == 0 && s.fed > 0 && s.r.pass == 0 {
		s.r.pass = int(s.fed) // the access units of the first pass: its pictures
	}
	s.fed++
	if at, ok := p.meta.Stamps.Get(frame.InputRecTime); ok && s.keys.Has(frame.InputRecTime) {
		s.readAt[p.meta.PTS%int64(len(s.readAt))] = at
	}
	return gpu.NVDECUnit{Data: p.data, Timestamp: p.meta.PTS}, nil
}

// onFrame stamps a decoded picture and hands it on.
func (s *nvdecSource) onFrame(d *gpu.Frame, pic gpu.NVDECPicture) {
	d.Stamps = frame.Stamps{}
	if s.keys.Has(frame.DecodeTime) {
		d.Stamps.Stamp(frame.DecodeTime, time.Now().UnixNano())
	}
	if s.keys.Has(frame.InputRecTime) && pic.Timestamp >= 0 {
		if at := s.readAt[pic.Timestamp%int64(len(s.readAt))]; at != 0 {
			d.Stamps.Stamp(frame.InputRecTime, at)
		}
	}
	d.SentAt = 0
	if s.feed != nil {
		if st, ok := s.feed.in.Stats().NextStamp(); ok { // pictures come in presentation order: the lowest PTS stamped, due when it was sent plus its reordering
			d.SentAt = st.Presented()
		}
		s.feed.restored(s.ctx, s.fb)
	} else if s.fb.Failing() {
		s.fb.Recovered()
	}
	if s.snd != nil {
		d.Audio = s.snd.Frame(s.n, s.r.pass)
		s.st.Audio.Add(d.Audio)
	}
	if s.fb.Hold {
		d.Retain()
		if s.last != nil {
			s.last.Release()
		}
		s.last = d
	}
	if s.feed != nil && s.feed.sync.Arrived(len(s.pending)+s.out.Len()+1) { // ran ahead of the show's clock
		d.Release()
		s.feed.ls.SyncDrops.Add(1)
		return
	}
	s.hand(d)
}

// hand stamps f as the source's next picture and puts it on the edge, or
// keeps it until there is room.
func (s *nvdecSource) hand(d *gpu.Frame) {
	d.PTS, d.TimeBase, d.SourceFrame = s.n, s.rate.Inverse(), s.n
	d.Colour, d.Source = s.col, s.id
	s.n++
	s.st.Produced.Add(1)
	if s.feed != nil && len(s.pending) == liveSyncDepth { // ran ahead of the show's clock by the whole wait
		s.pending[0].Release()
		s.pending[0] = nil
		s.pending = s.pending[1:]
		s.feed.ls.SyncDrops.Add(1)
	}
	s.pending = append(s.pending, d)
	s.flush()
}

// flush puts what the decoder made on the edge while there is room; it
// reports whether nothing is left waiting (the decoder may be fed).
func (s *nvdecSource) flush() bool {
	for len(s.pending) > 0 {
		ok, err := s.out.TryPut(s.pending[0])
		if err != nil || !ok {
			return false
		}
		s.ctx.Stats.Out.Add(1)
		s.pending[0] = nil
		s.pending = s.pending[1:]
	}
	return true
}

// onEnd runs on the loop's thread when the decoder has stopped.
func (s *nvdecSource) onEnd(err error) {
	s.stopMu.Lock()
	s.dec = nil
	s.stopMu.Unlock()
	if s.pk != nil {
		s.pk.Release()
		s.pk = nil
	}
	s.r.close()
	if s.snd != nil && !s.fromEdge { // opened again with the file
		s.snd.Close()
		s.sndOpen = false
	}
	switch {
	case errors.Is(err, gpu.ErrStopped) || s.ctx.Stopping():
	case s.feed != nil && err == nil: // the connection ended: the next one gets a decoder
		s.ctx.Log.Info("live connection ended", "input", s.r.path, "frames", s.n)
		s.housekeep()
	case err == nil:
		s.ctx.Log.Info("file ended", "path", s.r.path, "frames", s.n)
	default:
		s.fail(err)
	}
}

// fail reports err and has the loop send black and try again.
func (s *nvdecSource) fail(err error) {
	s.report(err)
	s.housekeep()
}

// report says what went wrong, once, and counts it; the source sends black
// (or holds) and tries again after show.RetryEvery.
func (s *nvdecSource) report(err error) { s.fb.Fail(s.ctx.Log, s.ctx.Stats, err) }

func (s *nvdecSource) warn(msg string) {
	s.ctx.Stats.Errors.Add(1)
	if s.st.Fail(errors.New(msg)) {
		s.ctx.Log.Warn("decoding goes on", "warning", msg)
	}
}

// fallback is a black picture, or the last good one copied (hold).
func (s *nvdecSource) fallback() (*gpu.Frame, error) {
	return fallbackFrame(s.pool, s.dl.stream, s.last, s.fb.Hold)
}

// Stop ends the decoder (on its loop) and waits for it, so nothing is
// handed on once the node has stopped.
func (s *nvdecSource) Stop() {
	if s.dl == nil {
		return
	}
	s.stopMu.Lock()
	s.stopped = true
	cancel := s.cancel
	s.cancel = nil
	dec, ended := s.dec, s.ended
	s.stopMu.Unlock()
	if cancel != nil {
		cancel() // returns once tick is not running
	}
	if dec != nil {
		dec.Stop()
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			s.ctx.Log.Error("the decoder did not stop within 5 s")
		}
	}
	if s.feed != nil {
		s.feed.close()
	}
	if s.own {
		s.dl.stop()
		logLoopStats(s.ctx.Log, "decoder thread", s.id, s.dl.loop.Stats())
	}
	if s.snd != nil { // the decoder has ended: nothing reads it now
		s.snd.Close()
	}
	for _, f := range s.pending {
		f.Release()
	}
	s.pending = nil
	if s.last != nil {
		s.last.Release()
		s.last = nil
	}
	if s.pool != nil {
		s.pool.Close()
	}
}

// logLoopStats logs where a decode loop's time went, µs a picture: wall
// clock by phase, and with gpu.NVDECClocksEnv set the thread's CPU by
// NVIDIA call (parse includes decode).
func logLoopStats(log *slog.Logger, msg, name string, st gpu.NVDECLoopStats) {
	if st.Frames == 0 {
		return
	}
	f := float64(st.Frames) * 1e3 // ns to µs a picture
	args := []any{"loop", name, "frames", st.Frames, "rounds", st.Rounds,
		"feed_us_per_frame", float64(st.FeedNs) / f, "map_us_per_frame", float64(st.MapNs) / f,
		"wait_us_per_frame", float64(st.WaitNs) / f, "unmap_us_per_frame", float64(st.UnmapNs) / f}
	if st.Clocks {
		args = append(args, "cpu_parse_us", float64(st.ParseCPUNs)/f, "cpu_decode_us", float64(st.DecodeCPUNs)/f,
			"cpu_map_us", float64(st.MapCPUNs)/f, "cpu_copy_us", float64(st.CopyCPUNs)/f,
			"cpu_status_us", float64(st.StatusCPUNs)/f, "cpu_unmap_us", float64(st.UnmapCPUNs)/f)
	}
	log.Info(msg, args...)
}
