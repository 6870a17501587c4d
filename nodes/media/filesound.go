package media

import (
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onairhq/onair/audio"
)

// FileSound is a file source's sound track beside its pictures, on any
// backend (ffmpeg_decode on the CPU, nvdec_file on the GPU): its first
// audio track, probed once, decoded by an AudioDecoder aligned to the
// first picture, picture n carrying its frame period's samples
// (audio.Cadence) from where the track stands. When the pictures start
// their file again (a looping source, a decoder opened again), so does the
// track: a track longer than the pictures is cut there, a shorter one ends
// in silence. A file without sound is silent; a track onair cannot use is
// reported through warn while the pictures go on.
//
// The track is decoded ahead of the pictures, off their thread, by a
// goroutine feeding from an ffmpeg process (AudioDecoder). A track of at
// most holdSeconds is kept whole as it is decoded: every later pass plays
// it from memory, with one ffmpeg for the source's whole life. A longer one
// is read at most aheadSeconds ahead, and its next pass starts decoding as
// soon as the current one streams, so it is there when the pictures start
// again. Frame never waits for ffmpeg: a picture whose samples are not
// decoded yet gets silence and is counted late, and the track stays
// aligned (as many of its samples are left out when they come). FrameWait
// waits for them (a source on a thread of its own).
//
// Open, Close, Frame, FrameWait and Started are called by one goroutine.
type FileSound struct {
	path string
	cad  audio.Cadence
	warn func(string)
	late *atomic.Uint64 // the show's count of pictures gone with late sound (nil: none)

	probeMu sync.Mutex // held while probing, by a track's goroutine
	mu      sync.Mutex // the probe's answer, shared with the tracks' goroutines
	probed  bool
	probedK fileKey // the file probed
	info    AudioInfo
	sound   bool // the file has a track onair plays
	wg      sync.WaitGroup

	// The caller's goroutine's:
	cur, next *soundTrack // the track playing and, for a long one, its next pass decoding ahead
	inPass    int         // pictures since the track started
	opened    time.Time   // when Open was called
	key       fileKey     // the file Open found
	lateN     uint64
}

const (
	// holdSeconds is the longest track kept whole in memory (11.5 MB of
	// 48 kHz stereo float): its later passes need no ffmpeg.
	holdSeconds = 30
	// aheadSeconds is how far ahead of the pictures a longer track is read.
	aheadSeconds = 2
	// startSeconds is how much of the track is decoded before Started says
	// the pictures may start.
	startSeconds = 0.5
	// chunkFrames is how many sample frames a track reads from ffmpeg at a
	// time (21 ms).
	chunkFrames = 1024
)

// startLimit is the longest Started waits for the track's first samples
// (a test makes it long).
var startLimit = time.Second

// holdValues is holdSeconds in interleaved values (a test makes it short).
var holdValues = holdSeconds * audio.Rate * audio.Channels

// NewFileSound is the sound of the file at path, for pictures at the
// cadence's rate. late (nil: none) counts the pictures that went on with
// silence because their sound was not decoded in time; warn says what is
// wrong with the track.
func NewFileSound(path string, cad audio.Cadence, late *atomic.Uint64, warn func(string)) *FileSound {
	return &FileSound{path: path, cad: cad, late: late, warn: warn}
}

// Open starts the track from its beginning (again), as the pictures start
// their file. It does not wait: the track is probed and decoded off the
// caller's goroutine (Started says when it is ready); one kept whole is
// played again from memory.
func (s *FileSound) Open() {
	s.inPass, s.opened = 0, time.Now()
	key := fileKeyOf(s.path)
	if key == s.key && s.cur.rewind() {
		s.next.close()
		s.next = nil
		return
	}
	s.key = key // another file at the path (or none) is probed again
	s.Close()
	s.cur = s.start()
}

// fileKey tells a file from another at the same path, as es.Recordings
// does.
type fileKey struct {
	size  int64
	mtime time.Time
}

func fileKeyOf(path string) fileKey {
	fi, err := os.Stat(path)
	if err != nil {
		return fileKey{size: -1}
	}
	return fileKey{fi.Size(), fi.ModTime()}
}

// Started reports whether the pictures may start: the track's first
// samples are decoded (or it has ended, or there is none), or startLimit
// has passed since Open (an ffmpeg that never starts delays the pictures
// no longer: they go on, their sound late). True before Open. It never
// waits.
func (s *FileSound) Started() bool {
	return s.cur == nil || s.cur.ready() || time.Since(s.opened) >= startLimit
}

// Close ends the track's decoding; the ffmpeg processes end off the
// caller's goroutine.
func (s *FileSound) Close() {
	s.cur.close()
	s.next.close()
	s.cur, s.next = nil, nil
}

// Late is how many pictures went on with silence because their sound was
// not decoded yet.
func (s *FileSound) Late() uint64 { return s.lateN }

// Frame is picture n's samples, or nil for a file without sound. pass is
// how many pictures a pass of the file holds, once known (0 before): the
// picture after a whole pass starts the track again. It never waits for
// the decoder: samples not decoded yet are silence, counted late.
func (s *FileSound) Frame(n int64, pass int) []float32 { return s.frame(n, pass, false) }

// FrameWait is Frame waiting for the samples that are not decoded yet.
func (s *FileSound) FrameWait(n int64, pass int) []float32 { return s.frame(n, pass, true) }

func (s *FileSound) frame(n int64, pass int, wait bool) []float32 {
	if pass > 0 && s.inPass == pass {
		if s.cur != nil && !s.cur.rewind() {
			s.cur.close()
			s.cur, s.next = s.next, nil
			if s.cur == nil {
				s.cur = s.start()
			}
		}
		s.inPass = 0
	}
	s.inPass++
	t := s.cur
	if t == nil {
		return nil
	}
	if s.next == nil && t.streams() { // too long to keep: the next pass decodes ahead
		s.next = s.start()
	}
	b := make([]float32, s.cad.Samples(n)*audio.Channels)
	switch t.take(b, wait) {
	case takeSilent:
		return nil
	case takeLate:
		s.lateN++
		if s.late != nil {
			s.late.Add(1)
		}
	}
	return b
}

// start begins decoding the track from its start: none for a file
// without sound, else by a goroutine of its own.
func (s *FileSound) start() *soundTrack {
	s.mu.Lock()
	silent := s.probed && s.probedK == s.key && !s.sound
	s.mu.Unlock()
	t := &soundTrack{keep: true}
	t.cond.L = &t.mu
	if silent {
		t.state = trackSilent
		return t
	}
	s.wg.Add(1)
	go s.decode(t, s.key)
	return t
}

// probe reads the file's track once (again for another file at the
// path: key); false for a file without one onair plays (said through
// warn).
func (s *FileSound) probe(key fileKey) (AudioInfo, bool) {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	s.mu.Lock()
	probed, info, sound := s.probed && s.probedK == key, s.info, s.sound
	s.mu.Unlock()
	if probed {
		return info, sound
	}
	info, ok, err := ProbeAudio("", s.path)
	if err != nil {
		s.warn("the sound track is left out: " + err.Error())
	}
	sound = ok && err == nil
	s.mu.Lock()
	s.probed, s.probedK, s.info, s.sound = true, key, info, sound
	s.mu.Unlock()
	return info, sound
}

// decode is a track's goroutine: it decodes the track from its start until
// it ends or the track is closed.
func (s *FileSound) decode(t *soundTrack, key fileKey) {
	defer s.wg.Done()
	info, ok := s.probe(key)
	if !ok || t.isClosed() {
		t.finish(trackSilent)
		return
	}
	dec, err := OpenAudio("", s.path, info)
	if err != nil {
		if !t.isClosed() {
			s.warn("the sound track is left out: " + err.Error())
		}
		t.finish(trackSilent)
		return
	}
	if t.started(dec) {
		chunk := make([]float32, chunkFrames*audio.Channels)
		for {
			end := dec.ReadInto(chunk) != nil // silence after the track's end
			if !t.put(chunk, end) || end {
				break
			}
		}
	}
	if err := dec.Close(); err != nil && !t.isClosed() {
		s.warn(err.Error())
	}
}

type trackState int

const (
	trackDecoding trackState = iota // more samples may come
	trackEnded                      // the track has no more: silence after them
	trackSilent                     // no sound at all (Frame's nil)
)

type takeResult int

const (
	takeOK     takeResult = iota
	takeLate              // some samples were not decoded yet: silence in their place
	takeSilent            // the track has no sound
)

// soundTrack is the track decoded from its start, and where the pictures
// stand in it.
type soundTrack struct {
	mu   sync.Mutex
	cond sync.Cond // on mu: samples came, some were taken, the track ended or closed
	// buf holds the track's values from base on (base 0 while kept).
	buf  []float32
	base int
	// r is the pictures' place in the track (values from its start); past
	// the end of buf: silence given for samples not decoded yet, left out
	// as they come.
	r     int
	state trackState
	// keep: buf holds the track from its start, while it is at most
	// holdValues: the pictures may start it again (rewind).
	keep   bool
	closed bool
	dec    *AudioDecoder // its ffmpeg, ended by close
}

// started records the track's decoder; false when the track was closed
// before it started.
func (t *soundTrack) started(dec *AudioDecoder) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dec = dec
	return !t.closed
}

// put adds a chunk the decoder read (end: the track's last), waiting while
// a streaming track is aheadSeconds ahead of the pictures; false once the
// track is closed.
//
// Only this goroutine changes buf and base; take reads buf and moves r,
// under mu. So the long copies (a kept track growing, or given up for
// streaming) are made outside mu: the pictures' take never waits on them.
func (t *soundTrack) put(chunk []float32, end bool) bool {
	const aheadValues = aheadSeconds * audio.Rate * audio.Channels
	switch {
	case t.keep && len(t.buf)+len(chunk) > holdValues: // too long to keep: from here on read ahead only
		t.mu.Lock()
		cut := min(t.r-t.base, len(t.buf))
		t.mu.Unlock()
		nb := slices.Clone(t.buf[cut:])
		t.mu.Lock()
		if t.r-t.base < cut { // rewound meanwhile
			nb, cut = slices.Clone(t.buf), 0
		}
		t.buf, t.base, t.keep = nb, t.base+cut, false
		t.mu.Unlock()
	case t.keep && cap(t.buf)-len(t.buf) < len(chunk):
		nb := make([]float32, len(t.buf), min(max(2*cap(t.buf), len(t.buf)+len(chunk), aheadValues), holdValues))
		copy(nb, t.buf)
		t.mu.Lock()
		t.buf = nb
		t.mu.Unlock()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for !t.keep && !t.closed && t.base+len(t.buf)-t.r >= aheadValues {
		t.cond.Wait()
	}
	if t.closed {
		return false
	}
	if taken := min(t.r-t.base, len(t.buf)); !t.keep && taken > 0 && taken >= len(t.buf)/2 {
		n := copy(t.buf, t.buf[taken:]) // at most aheadValues, once every aheadValues taken
		t.buf, t.base = t.buf[:n], t.base+taken
	}
	t.buf = append(t.buf, chunk...)
	if end {
		t.state = trackEnded
	}
	t.cond.Broadcast()
	return true
}

// finish ends a track that decodes no more (st: trackSilent, no sound).
func (t *soundTrack) finish(st trackState) {
	t.mu.Lock()
	t.state = st
	t.cond.Broadcast()
	t.mu.Unlock()
}

// take fills dst with the pictures' next samples; without wait, those not
// decoded yet are left silent (takeLate), else it waits for them.
func (t *soundTrack) take(dst []float32, wait bool) takeResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	for wait && !t.closed && t.state == trackDecoding && t.base+len(t.buf)-t.r < len(dst) {
		t.cond.Wait()
	}
	if t.state == trackSilent {
		return takeSilent
	}
	k := 0
	if i := t.r - t.base; i < len(t.buf) {
		k = copy(dst, t.buf[i:])
	}
	clear(dst[k:])
	t.r += len(dst)
	if !t.keep {
		t.cond.Broadcast() // room for a streaming track
	}
	if k < len(dst) && t.state == trackDecoding {
		return takeLate
	}
	return takeOK
}

// rewind starts the pictures again at the track's start, when it is kept
// whole; false when it is not (or t is nil).
func (t *soundTrack) rewind() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.keep || t.closed {
		return false
	}
	t.r = 0
	return true
}

// ready reports whether the track has startSeconds decoded ahead of the
// pictures, or decodes no more.
func (t *soundTrack) ready() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state != trackDecoding || !t.keep || t.base+len(t.buf)-t.r >= int(startSeconds*audio.Rate)*audio.Channels
}

// streams reports whether the track is too long to keep.
func (t *soundTrack) streams() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.keep && t.state == trackDecoding
}

func (t *soundTrack) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// close lets go of the track: its ffmpeg is killed, its goroutine returns.
func (t *soundTrack) close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.closed = true
	if t.dec != nil && t.dec.cmd.Process != nil {
		t.dec.cmd.Process.Kill() // a read waiting on the pipe returns
	}
	t.cond.Broadcast()
	t.mu.Unlock()
}
