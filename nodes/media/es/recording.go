package es

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// RecordLimit bounds the elementary stream of a file that Recordings hold
// in memory: a longer one is read from its file on every pass.
const RecordLimit = 256 << 20

// RecordBudget is what one Recordings holds in all unless its Budget says
// otherwise.
const RecordBudget = 1 << 30

// Recordings plays looping files from memory after their first pass. A
// file's first pass is read from the file as usual and its access units
// are kept, once for every source that plays the same file; each later pass,
// and every later source of that file, takes them from memory: no read,
// no search for start codes. A file is the same while its device, inode,
// size and modification time are; a file changed on disk is read afresh at
// the start of the next pass. Safe for concurrent use.
type Recordings struct {
	// Budget bounds what the recordings hold in all, by the files' sizes
	// reserved as a recording starts (0: RecordBudget): a file that would
	// go over it is read from its file on every pass.
	Budget int64

	mu   sync.Mutex
	m    map[fileKey]*recording
	held int64 // the sizes of the files in m
}

// Held is what the recordings hold: files, and bytes reserved for them.
func (rs *Recordings) Held() (files int, bytes int64) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.m), rs.held
}

type fileKey struct {
	path       string
	dev, inode uint64
	size       int64
	mtime      time.Time
}

// keyOf is the key of the file path names now.
func keyOf(path string) (fileKey, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileKey{}, false
	}
	return keyOfInfo(path, fi)
}

// keyOfInfo is the key of a regular file path whose FileInfo is fi.
func keyOfInfo(path string, fi os.FileInfo) (fileKey, bool) {
	if !fi.Mode().IsRegular() {
		return fileKey{}, false
	}
	k := fileKey{path: path, size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.dev, k.inode = uint64(st.Dev), st.Ino
	}
	return k, true
}

// recording is one file's access units. While it is being recorded only
// its recorder touches it; once complete it never changes.
type recording struct {
	key      fileKey
	codec    Codec
	info     Info
	data     []byte
	aus      []AccessUnit // Data and NALs are offsets into data and nals until complete
	spans    [][2]int     // each access unit's bytes in data
	nals     []int32
	complete bool
	users    int // Streams playing it or recording it (under Recordings.mu)
}

// Open opens path as Open does, through the recordings: a file recorded
// already is played from memory from its first access unit on. With
// record set (a source that loops) a file not recorded yet is, as it is
// read; without, it is only read.
func (rs *Recordings) Open(path string, want Codec, record bool) (*Stream, error) {
	s := &Stream{rs: rs, path: path, want: want, recording: record}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

// Stream is a file's access units, from the file or from its recording.
// It is not safe for concurrent use.
type Stream struct {
	rs        *Recordings
	path      string
	want      Codec
	recording bool // record the file if nobody has

	rd     *Reader    // reading the file (nil when playing a recording)
	rec    *recording // the recording played, or the one being recorded (with rd)
	next   int        // the next access unit of a recording played
	failed bool       // the recording being made was given up this pass
}

// open opens the file afresh: a complete recording of it as it is now is
// played, else the file is read (and recorded, unless another Stream is
// recording it).
func (s *Stream) open() error {
	if key, ok := keyOf(s.path); ok && s.play(key) {
		return nil
	}
	rd, err := Open(s.path, s.want)
	if err != nil {
		return err
	}
	s.rd, s.rec, s.failed = rd, nil, false
	s.record()
	return nil
}

// play has s play the complete recording of the file key names, if there
// is one.
func (s *Stream) play(key fileKey) bool {
	s.rs.mu.Lock()
	rec := s.rs.m[key]
	if rec == nil || !rec.complete || (s.want != 0 && rec.codec != s.want) {
		s.rs.mu.Unlock()
		return false
	}
	rec.users++
	s.rs.mu.Unlock()
	if s.rd != nil {
		s.rd.Close()
	}
	s.rd, s.rec, s.next = nil, rec, 0
	return true
}

// record has s, reading its file from the start, record it, unless
// another Stream is or the file is too long.
func (s *Stream) record() {
	f, ok := s.rd.closer.(*os.File)
	if !ok || !s.recording {
		return
	}
	fi, err := f.Stat() // the file being read, whatever its path names now
	if err != nil {
		return
	}
	key, ok := keyOfInfo(s.path, fi)
	if !ok || key.size > RecordLimit {
		return
	}
	info, _ := s.rd.Info()
	rs := s.rs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.m == nil {
		rs.m = map[fileKey]*recording{}
	}
	budget := rs.Budget
	if budget == 0 {
		budget = RecordBudget
	}
	if rs.m[key] == nil && rs.held+key.size <= budget {
		rec := &recording{key: key, codec: s.rd.Codec(), info: info, users: 1, data: make([]byte, 0, key.size)}
		rs.m[key] = rec
		rs.held += key.size
		s.rec, s.failed = rec, false
	}
}

// release lets go of the recording s plays or records: one being recorded
// is given up, one nobody plays any more is forgotten.
func (s *Stream) release() {
	rec := s.rec
	if rec == nil {
		return
	}
	s.rec = nil
	rs := s.rs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rec.users--
	if (!rec.complete || rec.users == 0) && rs.m[rec.key] == rec {
		delete(rs.m, rec.key)
		rs.held -= rec.key.size
	}
}

// Codec is the stream's codec.
func (s *Stream) Codec() Codec {
	if s.rd == nil && s.rec == nil {
		return s.want
	}
	if s.rd == nil {
		return s.rec.codec
	}
	return s.rd.Codec()
}

// Info is what the stream's first sequence parameter set says.
func (s *Stream) Info() (Info, bool) {
	if s.rd == nil && s.rec == nil {
		return Info{}, false
	}
	if s.rd == nil {
		return s.rec.info, true
	}
	return s.rd.Info()
}

// Recorded reports whether the access units come from memory.
func (s *Stream) Recorded() bool { return s.rd == nil }

// Next returns the next access unit, or io.EOF after the last one of the
// pass. From a recording, Data and NALs are shared and must not be
// written; they stay valid while the Stream is open.
func (s *Stream) Next() (AccessUnit, error) {
	if s.rd == nil && s.rec == nil {
		return AccessUnit{}, errClosed
	}
	if s.rd == nil {
		if s.next >= len(s.rec.aus) {
			return AccessUnit{}, io.EOF
		}
		s.next++
		return s.rec.aus[s.next-1], nil
	}
	au, err := s.rd.Next()
	if rec := s.rec; rec != nil && !s.failed {
		switch {
		case err == nil && int64(len(rec.data)+len(au.Data)) <= RecordLimit:
			start := len(rec.data)
			rec.data = append(rec.data, au.Data...)
			rec.spans = append(rec.spans, [2]int{start, len(rec.data)})
			nals := len(rec.nals)
			rec.nals = append(rec.nals, au.NALs...)
			keep := au
			keep.Data, keep.NALs = nil, rec.nals[nals:len(rec.nals):len(rec.nals)]
			if au.Info != nil {
				info := *au.Info
				keep.Info = &info
			}
			rec.aus = append(rec.aus, keep)
		case err == io.EOF && len(rec.aus) > 0 && !rec.complete:
			s.finish(rec)
		case err == io.EOF: // after the last again, or nothing to keep
		default: // a read error, or too long: give it up
			s.failed = true
		}
	}
	return au, err
}

// finish completes the recording: its access units point into its memory
// and other Streams may play it.
func (s *Stream) finish(rec *recording) {
	// rec.nals may have moved while it grew: point each access unit at
	// its part of the final array, and at its bytes.
	n := 0
	for i := range rec.aus {
		k := len(rec.aus[i].NALs)
		rec.aus[i].NALs = rec.nals[n : n+k : n+k]
		n += k
		sp := rec.spans[i]
		rec.aus[i].Data = rec.data[sp[0]:sp[1]:sp[1]]
	}
	rec.spans = nil
	s.rs.mu.Lock()
	rec.complete = true
	s.rs.mu.Unlock()
}

// Rewind starts the stream again. A recording completed this pass is
// played from now on, as is one another Stream completed; a recording
// played is checked against the file, and a file changed on disk is
// opened afresh (one that is gone plays on from memory).
func (s *Stream) Rewind() error {
	if s.rd == nil && s.rec == nil {
		return errClosed
	}
	if s.rec != nil && !s.rec.complete {
		s.release() // the pass ended early: what was recorded is incomplete
	}
	key, ok := keyOf(s.path)
	if s.rec != nil { // complete: played, or recorded this pass
		if ok && key != s.rec.key {
			s.Close()
			return s.open()
		}
		if s.rd != nil {
			s.rd.Close()
			s.rd = nil
		}
		s.next = 0
		return nil
	}
	if ok && s.play(key) {
		return nil
	}
	if err := s.rd.Rewind(); err != nil {
		return err
	}
	s.record()
	return nil
}

// Close closes the file and lets go of the recording.
func (s *Stream) Close() error {
	var err error
	if s.rd != nil {
		err = s.rd.Close()
		s.rd = nil
	}
	s.release()
	return err
}

var errClosed = errors.New("es: the stream is closed")
