// Package mediatest is what tests of media and of the backends share:
// pictures of the test patterns drawn without a pool, clips of them, and
// a disk that fills up. Only tests import it.
package mediatest

import (
	"os"
	"sync"
	"syscall"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media"
)

// PatternFrame draws picture n of a test pattern stamped with id into a new
// frame: one picture without a pool, for tests.
func PatternFrame(f frame.Format, p media.Pattern, w, h int, id uint16, n int) (*frame.Frame, error) {
	tp, err := media.NewTestPattern(media.TestPatternConfig{ID: "pattern", StampID: id, Pattern: p, Format: f, Width: w, Height: h, Rate: frame.Rational{Num: 30, Den: 1}})
	if err != nil {
		return nil, err
	}
	fr, err := frame.New(f, w, h)
	if err != nil {
		return nil, err
	}
	tp.SetNext(int64(n))
	if err := tp.Next(fr); err != nil {
		fr.Release()
		return nil, err
	}
	return fr, nil
}

// RecordPattern writes pictures 0..n-1 of a test pattern stamped with id to
// a Y4M file and returns them: a clip whose every pixel a test knows.
func RecordPattern(path string, f frame.Format, p media.Pattern, w, h int, id uint16, n int) ([]*frame.Frame, error) {
	rec, err := media.CreateRecord(path, f, w, h, frame.Rational{Num: 30, Den: 1})
	if err != nil {
		return nil, err
	}
	var out []*frame.Frame
	for i := 0; i < n; i++ {
		fr, err := PatternFrame(f, p, w, h, id, i)
		if err == nil {
			err = rec.Write(fr)
		}
		if err != nil {
			rec.Close()
			return nil, err
		}
		out = append(out, fr)
	}
	return out, rec.Close()
}

// SmallDisk stands in for a disk with little room, for tests of what
// outputs do when it fills up: its files are real files, but a write past
// its free bytes writes what fits and fails with ENOSPC, as a full file
// system does. Cutting a file shorter gives the bytes back. It is safe for
// concurrent use.
type SmallDisk struct {
	mu   sync.Mutex
	free int64
}

// NewSmallDisk returns a disk with free bytes of room.
func NewSmallDisk(free int64) *SmallDisk { return &SmallDisk{free: free} }

// SetFree sets the room left: 0 fills the disk, more frees it up.
func (d *SmallDisk) SetFree(n int64) {
	d.mu.Lock()
	d.free = n
	d.mu.Unlock()
}

// Free is the room left, in bytes.
func (d *SmallDisk) Free() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.free
}

// Open opens a file on the disk; it is an OpenFunc.
func (d *SmallDisk) Open(name string, flag int, perm os.FileMode) (media.RecordFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &smallFile{File: f, d: d}, nil
}

type smallFile struct {
	*os.File
	d *SmallDisk
}

func (f *smallFile) Write(b []byte) (int, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	fit := min(int64(len(b)), max(f.d.free, 0))
	n, err := f.File.Write(b[:fit])
	f.d.free -= int64(n)
	if err == nil && n < len(b) {
		err = &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return n, err
}

func (f *smallFile) Truncate(size int64) error {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	st, err := f.File.Stat()
	if err != nil {
		return err
	}
	if err := f.File.Truncate(size); err != nil {
		return err
	}
	if st.Size() > size {
		f.d.free += st.Size() - size
	}
	return nil
}
