package media

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/onairhq/onair/frame"
)

// RawFileConfig describes a raw_file source: a file of whole NV12 or P010
// frames, back to back, with no header.
type RawFileConfig struct {
	ID     string // the source id stamped on frames
	Path   string
	Format frame.Format
	Width  int
	Height int
	Rate   frame.Rational // frames per second; timestamps count in 1/Rate
	Colour frame.Colour   // tags stamped on every frame; zero: BT709
	Loop   bool           // start over at the end, timestamps counting on
	// Resident keeps the file's pictures in memory: each is read from the
	// file the first time it is shown and copied from memory on later
	// passes. At the start of every pass the file is checked, and a changed
	// modification time or size drops what was kept.
	Resident bool
}

// RawFile reads frame n of a raw file with one pread at offset n × frame
// size, straight into the destination frame. Looping is arithmetic on a
// frame counter: the file offset wraps, the timestamp counts on; nothing is
// kept between passes (unless Resident), so a frame rewritten in the file
// shows on the next pass.
type RawFile struct {
	cfg       RawFileConfig
	f         *os.File
	frameSize int64
	frames    int64 // whole or partial frames in the file at the start of the pass
	n         int64 // frames produced so far
	pos       int64 // index in the file of the next frame

	// resident mode
	mem    []byte
	loaded []bool
	mtime  time.Time
	size   int64
	reload int // how many times the kept pictures were dropped
	st     statBuf
	err    error // sticky: a file that ended inside a frame stopped the source
}

// OpenRawFile opens the file and checks that it holds at least one frame.
func OpenRawFile(cfg RawFileConfig) (*RawFile, error) {
	if cfg.Format != frame.NV12 && cfg.Format != frame.P010 {
		return nil, fmt.Errorf("raw_file %s: format %v: use nv12 or p010", cfg.Path, cfg.Format)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width%2 != 0 || cfg.Height%2 != 0 {
		return nil, fmt.Errorf("raw_file %s: size %dx%d must be positive and even", cfg.Path, cfg.Width, cfg.Height)
	}
	if cfg.Rate.Num <= 0 || cfg.Rate.Den <= 0 {
		return nil, fmt.Errorf("raw_file %s: frame rate %v must be positive", cfg.Path, cfg.Rate)
	}
	if cfg.Colour == (frame.Colour{}) {
		cfg.Colour = frame.BT709
	}
	f, err := os.Open(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("raw_file: %w (check the source's path)", err)
	}
	r := &RawFile{cfg: cfg, f: f, frameSize: int64(cfg.Format.Size(cfg.Width, cfg.Height))}
	if err := r.startPass(); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// Format, Width and Height describe the frames Next fills.
func (r *RawFile) Format() frame.Format { return r.cfg.Format }
func (r *RawFile) Width() int           { return r.cfg.Width }
func (r *RawFile) Height() int          { return r.cfg.Height }

// Rate is the source's frame rate.
func (r *RawFile) Rate() frame.Rational { return r.cfg.Rate }

// FramesInFile is the number of frames (a partial last one included) the
// file held at the start of the current pass.
func (r *RawFile) FramesInFile() int64 { return r.frames }

// Reloads is how many times resident mode dropped its kept pictures because
// the file changed.
func (r *RawFile) Reloads() int { return r.reload }

// startPass looks at the file at the start of a pass: its length decides
// how many frames the pass has, and in resident mode a changed file drops
// the pictures kept in memory.
func (r *RawFile) startPass() error {
	size, mtime, err := fileStat(r.f, &r.st)
	if err != nil {
		return fmt.Errorf("raw_file %s: %w", r.cfg.Path, err)
	}
	if size < r.frameSize {
		return fmt.Errorf("raw_file %s: the file holds %d bytes, less than one %dx%d %v frame (%d bytes): check size and format",
			r.cfg.Path, size, r.cfg.Width, r.cfg.Height, r.cfg.Format, r.frameSize)
	}
	r.frames = (size + r.frameSize - 1) / r.frameSize
	if r.cfg.Resident {
		if r.mem == nil || !mtime.Equal(r.mtime) || size != r.size {
			if r.mem != nil {
				r.reload++
			}
			if int64(cap(r.mem)) < r.frames*r.frameSize {
				r.mem = make([]byte, r.frames*r.frameSize)
				r.loaded = make([]bool, r.frames)
			}
			r.mem = r.mem[:r.frames*r.frameSize]
			r.loaded = r.loaded[:r.frames]
			clear(r.loaded)
			r.mtime, r.size = mtime, size
		}
	}
	return nil
}

// Next reads the next frame into dst, a tightly packed frame of the
// source's format and size (as frame pools make). It returns io.EOF after
// the last frame when not looping, and an error naming the file and the
// offset when the file ends inside a frame.
func (r *RawFile) Next(dst *frame.Frame) error {
	if dst.Format != r.cfg.Format || dst.Width != r.cfg.Width || dst.Height != r.cfg.Height || int64(len(dst.Bytes())) != r.frameSize {
		return fmt.Errorf("raw_file %s: frame is %v %dx%d, want a packed %v %dx%d", r.cfg.Path, dst.Format, dst.Width, dst.Height, r.cfg.Format, r.cfg.Width, r.cfg.Height)
	}
	if r.err != nil {
		return r.err
	}
	if r.pos >= r.frames {
		if !r.cfg.Loop {
			return io.EOF
		}
		r.pos = 0
		if err := r.startPass(); err != nil {
			return err
		}
	}
	off := r.pos * r.frameSize
	buf := dst.Bytes()
	if r.cfg.Resident {
		kept := r.mem[off : off+r.frameSize]
		if !r.loaded[r.pos] {
			if err := r.pread(kept, off); err != nil {
				return err
			}
			r.loaded[r.pos] = true
		}
		copy(buf, kept)
	} else if err := r.pread(buf, off); err != nil {
		return err
	}
	dst.PTS, dst.TimeBase, dst.Colour = r.n, r.cfg.Rate.Inverse(), r.cfg.Colour
	dst.Source, dst.SourceFrame = r.cfg.ID, r.n
	r.n++
	r.pos++
	return nil
}

func (r *RawFile) pread(buf []byte, off int64) error {
	got, err := r.f.ReadAt(buf, off)
	if got == len(buf) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		r.err = fmt.Errorf("raw_file %s: the file ends inside frame %d at offset %d (%d of %d bytes): the file must hold whole %dx%d %v frames",
			r.cfg.Path, r.pos, off+int64(got), got, len(buf), r.cfg.Width, r.cfg.Height, r.cfg.Format)
		return r.err
	}
	return fmt.Errorf("raw_file %s: reading frame %d at offset %d: %w", r.cfg.Path, r.pos, off, err)
}

// Stat describes the open file (which may no longer be the file at its
// path: see os.SameFile).
func (r *RawFile) Stat() (os.FileInfo, error) { return r.f.Stat() }

// Close closes the file and drops the kept pictures.
func (r *RawFile) Close() error {
	r.mem, r.loaded = nil, nil
	return r.f.Close()
}
