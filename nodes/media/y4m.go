package media

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/onairhq/onair/frame"
)

// Record writes frames as a YUV4MPEG2 stream: the header
// "YUV4MPEG2 W H F<num>:<den> Ip A1:1 C420jpeg" for NV12 (chroma
// de-interleaved into planar Cb, Cr) or "... C420p10 XYSCSS=420P10" for P010
// (16-bit little-endian samples holding the 10-bit value), with
// XCOLORRANGE=LIMITED or FULL when RecordOptions.Range says, then "FRAME" and
// the planes for every frame. ffmpeg and ffprobe read it.
//
// Each frame goes out in one write of the whole frame, and counts once that
// write has returned: Frames is what the file holds, never what sits in a
// buffer. A write that fails part way (a full disk) is cut off again, so the
// file ends after its last whole frame; OpenRecord with Continue carries on
// after it.
type Record struct {
	path   string
	f      RecordFile // nil when writing to a caller's io.Writer
	w      io.Writer
	format frame.Format
	width  int
	height int
	rate   frame.Rational
	buf    []byte // one whole frame: "FRAME\n" and its planes
	frames int64
	size   int64  // bytes of the header and the whole frames written
	wrote  bool   // the header is out
	cut    int64  // bytes of a partial last frame OpenRecord cut off
	rng    string // RecordOptions.Range
}

// RecordFile is the file a Record writes: an *os.File, or in a test a
// stand-in (a disk that fills up).
type RecordFile interface {
	io.Writer
	io.ReaderAt
	io.Seeker
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Close() error
}

// OpenFunc opens a Record's file, as os.OpenFile does.
type OpenFunc func(name string, flag int, perm os.FileMode) (RecordFile, error)

// OpenOSFile is os.OpenFile as an OpenFunc.
func OpenOSFile(name string, flag int, perm os.FileMode) (RecordFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// RecordOptions say how OpenRecord opens its file.
type RecordOptions struct {
	// Continue keeps what the file holds: a stream with this Record's header
	// is continued after its last whole frame (a partial frame after it, left
	// by a write that failed, is cut off); a missing or empty file is
	// started. A file holding anything else is refused, and left as it is.
	// Without Continue the file is truncated.
	Continue bool
	// Open opens the file; nil is os.OpenFile.
	Open OpenFunc
	// Range is the colour range of the frames, "limited" or "full", written
	// as the header's XCOLORRANGE tag (as ffmpeg writes and reads it); ""
	// writes none.
	Range string
}

// CreateRecord creates (truncates) path and returns a Record writing to it.
func CreateRecord(path string, f frame.Format, w, h int, rate frame.Rational) (*Record, error) {
	return OpenRecord(path, f, w, h, rate, RecordOptions{})
}

// OpenRecord opens path for a Record: truncated, or continued (see
// RecordOptions.Continue).
func OpenRecord(path string, f frame.Format, w, h int, rate frame.Rational, o RecordOptions) (*Record, error) {
	if err := checkRecord(f, w, h, rate); err != nil {
		return nil, fmt.Errorf("record %s: %w", path, err)
	}
	open := o.Open
	if open == nil {
		open = OpenOSFile
	}
	flag := os.O_RDWR | os.O_CREATE | os.O_TRUNC
	if o.Continue {
		flag = os.O_RDWR | os.O_CREATE
	}
	file, err := open(path, flag, 0o644)
	if err != nil {
		return nil, fmt.Errorf("record: %w (check that the directory exists and is writable)", err)
	}
	r := NewRecord(file, f, w, h, rate)
	r.f, r.path, r.rng = file, path, o.Range
	if o.Continue {
		if err := r.resume(); err != nil {
			file.Close()
			return nil, fmt.Errorf("record %s: %w", path, err)
		}
	}
	return r, nil
}

// resume finds where the stream in the file ends: after its last whole
// frame. It cuts off a partial frame after that and leaves the file's
// offset there.
func (r *Record) resume() error {
	st, err := r.f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	hdr := r.headerLine()
	head := make([]byte, min(size, int64(len(hdr))))
	if _, err := r.f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading its header: %w", err)
	}
	switch {
	case size == 0:
		return nil // a new stream: the header goes out with the first frame
	case size < int64(len(hdr)) && bytes.Equal(head, []byte(hdr[:size])):
		// A header cut short by a failed write: start again.
		r.cut = size
		return r.truncate(0)
	case string(head) != hdr:
		line, _, _ := bytes.Cut(head, []byte("\n"))
		return fmt.Errorf("the file holds another stream (%q), not this output's (%q); it is left as it is: move it away or choose another path", firstBytes(line), strings.TrimSuffix(hdr, "\n"))
	}
	frameLen := int64(6 + r.format.Size(r.width, r.height))
	whole := (size - int64(len(hdr))) / frameLen
	end := int64(len(hdr)) + whole*frameLen
	if whole > 0 {
		mark := make([]byte, 6)
		if _, err := r.f.ReadAt(mark, end-frameLen); err != nil {
			return fmt.Errorf("reading its last frame: %w", err)
		}
		if string(mark) != "FRAME\n" {
			return fmt.Errorf("its frames are not %v %dx%d frames (no FRAME at offset %d); it is left as it is: move it away or choose another path", r.format, r.width, r.height, end-frameLen)
		}
	}
	r.wrote, r.frames, r.cut = true, whole, size-end
	return r.truncate(end)
}

// truncate cuts the file at size and writes on from there.
func (r *Record) truncate(size int64) error {
	if err := r.f.Truncate(size); err != nil {
		return err
	}
	if _, err := r.f.Seek(size, io.SeekStart); err != nil {
		return err
	}
	r.size = size
	return nil
}

func checkRecord(f frame.Format, w, h int, rate frame.Rational) error {
	if f != frame.NV12 && f != frame.P010 {
		return fmt.Errorf("format %v: record writes nv12 or p010", f)
	}
	if w <= 0 || h <= 0 || w%2 != 0 || h%2 != 0 {
		return fmt.Errorf("size %dx%d must be positive and even", w, h)
	}
	if rate.Num <= 0 || rate.Den <= 0 {
		return fmt.Errorf("frame rate %v must be positive", rate)
	}
	return nil
}

// NewRecord returns a Record writing to w; the header goes out with the
// first frame (or on Close, for an empty stream).
func NewRecord(w io.Writer, f frame.Format, width, height int, rate frame.Rational) *Record {
	return &Record{w: w, format: f, width: width, height: height, rate: rate, path: "y4m stream"}
}

// Frames is the number of whole frames the stream holds: those written,
// and those a continued file held already.
func (r *Record) Frames() int64 { return r.frames }

// Cut is the number of bytes of a partial frame (or header) at the end of a
// continued file that OpenRecord cut off.
func (r *Record) Cut() int64 { return r.cut }

func (r *Record) headerLine() string {
	c := "C420jpeg"
	if r.format == frame.P010 {
		c = "C420p10 XYSCSS=420P10"
	}
	switch r.rng {
	case "limited":
		c += " XCOLORRANGE=LIMITED"
	case "full":
		c += " XCOLORRANGE=FULL"
	}
	return fmt.Sprintf("YUV4MPEG2 W%d H%d F%d:%d Ip A1:1 %s\n", r.width, r.height, r.rate.Num, r.rate.Den, c)
}

// put writes b whole, or cuts a partial write off again.
func (r *Record) put(b []byte) error {
	n, err := r.w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		if n > 0 && r.f != nil {
			if terr := r.truncate(r.size); terr != nil {
				err = fmt.Errorf("%w; cutting off the partial write also failed: %v", err, terr)
			}
		}
		return err
	}
	r.size += int64(n)
	return nil
}

func (r *Record) header() error {
	if r.wrote {
		return nil
	}
	if err := r.put([]byte(r.headerLine())); err != nil {
		return err
	}
	r.wrote = true
	return nil
}

// Write appends one frame, which must have the Record's format and size.
// It counts once the whole frame is written; on an error the stream still
// ends after its last whole frame.
func (r *Record) Write(f *frame.Frame) error {
	if f.Format != r.format || f.Width != r.width || f.Height != r.height {
		return fmt.Errorf("record %s: frame is %v %dx%d, the file is %v %dx%d", r.path, f.Format, f.Width, f.Height, r.format, r.width, r.height)
	}
	if err := r.header(); err != nil {
		return fmt.Errorf("record %s: header: %w", r.path, err)
	}
	bps := f.Format.BytesPerSample()
	w, h, cw, ch := f.Width, f.Height, f.Width/2, f.Height/2
	need := 6 + f.Format.Size(w, h)
	if cap(r.buf) < need {
		r.buf = make([]byte, need)
	}
	buf := r.buf[:need]
	copy(buf, "FRAME\n")
	ys, cs := w*h*bps, cw*ch*bps
	yb, u, v := buf[6:6+ys], buf[6+ys:6+ys+cs], buf[6+ys+cs:]
	if f.Format == frame.NV12 {
		for y := 0; y < h; y++ {
			copy(yb[y*w:(y+1)*w], f.Data[0][y*f.Pitch[0]:])
		}
		for y := 0; y < ch; y++ {
			row := f.Data[1][y*f.Pitch[1]:]
			for x := 0; x < cw; x++ {
				u[y*cw+x], v[y*cw+x] = row[2*x], row[2*x+1]
			}
		}
	} else {
		yp, cp := f.Plane16(0), f.Plane16(1)
		for y := 0; y < h; y++ {
			row := yp[y*f.Pitch[0]/2:]
			for x := 0; x < w; x++ {
				binary.LittleEndian.PutUint16(yb[2*(y*w+x):], row[x]>>6)
			}
		}
		for y := 0; y < ch; y++ {
			row := cp[y*f.Pitch[1]/2:]
			for x := 0; x < cw; x++ {
				binary.LittleEndian.PutUint16(u[2*(y*cw+x):], row[2*x]>>6)
				binary.LittleEndian.PutUint16(v[2*(y*cw+x):], row[2*x+1]>>6)
			}
		}
	}
	if err := r.put(buf); err != nil {
		return fmt.Errorf("record %s: frame %d: %w", r.path, r.frames, err)
	}
	r.frames++
	return nil
}

// Close writes the header of an empty stream and closes the file
// OpenRecord opened. Nothing is buffered: every frame Write counted is in
// the file already.
func (r *Record) Close() error {
	err := r.header()
	if r.f != nil {
		if cerr := r.f.Close(); err == nil {
			err = cerr
		}
		r.f = nil
	}
	if err != nil {
		return fmt.Errorf("record %s: %w", r.path, err)
	}
	return nil
}

// Y4MReader reads a YUV4MPEG2 file as a source: 8-bit 4:2:0 (C420jpeg,
// C420mpeg2, C420paldv, C420 or no C tag) becomes NV12; C420p10 becomes P010.
// Its frames carry BT.709 colour tags, and the range the header's
// XCOLORRANGE tag says (limited without one).
// Frame n carries PTS n in a time base of 1/rate; with Loop it starts over at
// the end of the file with timestamps counting on.
type Y4MReader struct {
	path    string
	id      string
	f       *os.File
	r       *bufio.Reader
	format  frame.Format
	width   int
	height  int
	rate    frame.Rational
	loop    bool
	n       int64
	data    int64 // offset of the first FRAME
	scratch []byte
	colour  frame.Colour
}

// OpenY4M opens path and parses its header. id names the source on frames.
func OpenY4M(path, id string, loop bool) (*Y4MReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("y4m: %w", err)
	}
	br := bufio.NewReaderSize(f, 1<<20)
	line, err := br.ReadString('\n')
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("y4m %s: reading the header: %v (is it a YUV4MPEG2 file?)", path, err)
	}
	y := &Y4MReader{path: path, id: id, f: f, r: br, loop: loop, data: int64(len(line)), colour: frame.BT709}
	if err := y.parseHeader(strings.TrimSuffix(line, "\n")); err != nil {
		f.Close()
		return nil, fmt.Errorf("y4m %s: %w", path, err)
	}
	return y, nil
}

func (y *Y4MReader) parseHeader(line string) error {
	fields := strings.Fields(line)
	if len(fields) == 0 || fields[0] != "YUV4MPEG2" {
		return fmt.Errorf("header does not start with YUV4MPEG2")
	}
	y.format = frame.NV12
	for _, t := range fields[1:] {
		if len(t) < 2 {
			continue
		}
		v := t[1:]
		switch t[0] {
		case 'W':
			y.width, _ = strconv.Atoi(v)
		case 'H':
			y.height, _ = strconv.Atoi(v)
		case 'F':
			num, den, ok := strings.Cut(v, ":")
			n, e1 := strconv.ParseInt(num, 10, 64)
			d, e2 := strconv.ParseInt(den, 10, 64)
			if !ok || e1 != nil || e2 != nil || n <= 0 || d <= 0 {
				return fmt.Errorf("bad frame rate %q", t)
			}
			y.rate = frame.Rational{Num: n, Den: d}
		case 'X':
			switch v {
			case "COLORRANGE=LIMITED":
				y.colour.Range = "limited"
			case "COLORRANGE=FULL":
				y.colour.Range = "full"
			}
		case 'I':
			if v != "p" && v != "?" {
				return fmt.Errorf("interlaced stream (%s): only progressive is supported", t)
			}
		case 'C':
			switch v {
			case "420jpeg", "420mpeg2", "420paldv", "420":
				y.format = frame.NV12
			case "420p10":
				y.format = frame.P010
			default:
				return fmt.Errorf("colour space %s: supported are C420jpeg, C420mpeg2, C420paldv and C420p10", t)
			}
		}
	}
	if y.width <= 0 || y.height <= 0 || y.width%2 != 0 || y.height%2 != 0 {
		return fmt.Errorf("size %dx%d must be positive and even", y.width, y.height)
	}
	if y.rate.Num == 0 {
		y.rate = frame.Rational{Num: 25, Den: 1}
	}
	return nil
}

// Format, Width, Height and Rate describe the stream.
func (y *Y4MReader) Format() frame.Format { return y.format }
func (y *Y4MReader) Width() int           { return y.width }
func (y *Y4MReader) Height() int          { return y.height }
func (y *Y4MReader) Rate() frame.Rational { return y.rate }

// Next reads the next frame into dst. At the end of the stream it returns
// io.EOF, or with Loop starts over; a stream cut inside a frame is an error.
func (y *Y4MReader) Next(dst *frame.Frame) error {
	if dst.Format != y.format || dst.Width != y.width || dst.Height != y.height {
		return fmt.Errorf("y4m %s: frame is %v %dx%d, want %v %dx%d", y.path, dst.Format, dst.Width, dst.Height, y.format, y.width, y.height)
	}
	line, err := y.r.ReadSlice('\n')
	if err == io.EOF && len(line) == 0 {
		if !y.loop || y.n == 0 {
			return io.EOF
		}
		if _, err := y.f.Seek(y.data, io.SeekStart); err != nil {
			return fmt.Errorf("y4m %s: %w", y.path, err)
		}
		y.r.Reset(y.f)
		line, err = y.r.ReadSlice('\n')
	}
	if err != nil {
		return fmt.Errorf("y4m %s: frame %d: reading the FRAME line: %v", y.path, y.n, err)
	}
	if !bytes.HasPrefix(line, []byte("FRAME")) {
		return fmt.Errorf("y4m %s: frame %d: expected FRAME, found %q", y.path, y.n, firstBytes(line))
	}
	bps := y.format.BytesPerSample()
	size := y.format.Size(y.width, y.height)
	if cap(y.scratch) < size {
		y.scratch = make([]byte, size)
	}
	buf := y.scratch[:size]
	if _, err := io.ReadFull(y.r, buf); err != nil {
		return fmt.Errorf("y4m %s: frame %d: the file ends inside the frame (%v)", y.path, y.n, err)
	}
	w, h, cw, ch := y.width, y.height, y.width/2, y.height/2
	ys := w * h * bps
	u, v := buf[ys:ys+cw*ch*bps], buf[ys+cw*ch*bps:]
	if y.format == frame.NV12 {
		for r := 0; r < h; r++ {
			copy(dst.Data[0][r*dst.Pitch[0]:r*dst.Pitch[0]+w], buf[r*w:])
		}
		for r := 0; r < ch; r++ {
			row := dst.Data[1][r*dst.Pitch[1]:]
			for x := 0; x < cw; x++ {
				row[2*x], row[2*x+1] = u[r*cw+x], v[r*cw+x]
			}
		}
	} else {
		yp, cp := dst.Plane16(0), dst.Plane16(1)
		for r := 0; r < h; r++ {
			row := yp[r*dst.Pitch[0]/2:]
			for x := 0; x < w; x++ {
				row[x] = binary.LittleEndian.Uint16(buf[2*(r*w+x):]) << 6
			}
		}
		for r := 0; r < ch; r++ {
			row := cp[r*dst.Pitch[1]/2:]
			for x := 0; x < cw; x++ {
				row[2*x] = binary.LittleEndian.Uint16(u[2*(r*cw+x):]) << 6
				row[2*x+1] = binary.LittleEndian.Uint16(v[2*(r*cw+x):]) << 6
			}
		}
	}
	dst.PTS, dst.TimeBase, dst.Colour = y.n, y.rate.Inverse(), y.colour
	dst.Source, dst.SourceFrame = y.id, y.n
	y.n++
	return nil
}

func firstBytes(b []byte) []byte {
	if len(b) > 16 {
		return b[:16]
	}
	return b
}

// Stat describes the open file (which may no longer be the file at its
// path: see os.SameFile).
func (y *Y4MReader) Stat() (os.FileInfo, error) { return y.f.Stat() }

// Close closes the file.
func (y *Y4MReader) Close() error { return y.f.Close() }
