package media

import (
	"bufio"
	"bytes"
	"encoding/binary"
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
// (16-bit little-endian samples holding the 10-bit value), then "FRAME" and
// the planes for every frame. ffmpeg and ffprobe read it.
type Record struct {
	path    string
	f       *os.File // nil when writing to a caller's io.Writer
	w       *bufio.Writer
	format  frame.Format
	width   int
	height  int
	rate    frame.Rational
	scratch []byte
	frames  int64
	wrote   bool
}

// CreateRecord creates (truncates) path and returns a Record writing to it.
func CreateRecord(path string, f frame.Format, w, h int, rate frame.Rational) (*Record, error) {
	if err := checkRecord(f, w, h, rate); err != nil {
		return nil, fmt.Errorf("record %s: %w", path, err)
	}
	file, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("record: %w (check that the directory exists and is writable)", err)
	}
	r := NewRecord(file, f, w, h, rate)
	r.f, r.path = file, path
	return r, nil
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
	return &Record{w: bufio.NewWriterSize(w, 1<<20), format: f, width: width, height: height, rate: rate, path: "y4m stream"}
}

// Frames is the number of frames written so far.
func (r *Record) Frames() int64 { return r.frames }

func (r *Record) header() error {
	if r.wrote {
		return nil
	}
	r.wrote = true
	c := "C420jpeg"
	if r.format == frame.P010 {
		c = "C420p10 XYSCSS=420P10"
	}
	_, err := fmt.Fprintf(r.w, "YUV4MPEG2 W%d H%d F%d:%d Ip A1:1 %s\n", r.width, r.height, r.rate.Num, r.rate.Den, c)
	return err
}

// Write appends one frame, which must have the Record's format and size.
func (r *Record) Write(f *frame.Frame) error {
	if f.Format != r.format || f.Width != r.width || f.Height != r.height {
		return fmt.Errorf("record %s: frame is %v %dx%d, the file is %v %dx%d", r.path, f.Format, f.Width, f.Height, r.format, r.width, r.height)
	}
	if err := r.header(); err != nil {
		return fmt.Errorf("record %s: %w", r.path, err)
	}
	if _, err := r.w.WriteString("FRAME\n"); err != nil {
		return fmt.Errorf("record %s: %w", r.path, err)
	}
	bps := f.Format.BytesPerSample()
	cw, ch := f.Width/2, f.Height/2
	if need := 2 * cw * ch * bps; cap(r.scratch) < need {
		r.scratch = make([]byte, need)
	}
	buf := r.scratch[:2*cw*ch*bps]
	u, v := buf[:cw*ch*bps], buf[cw*ch*bps:]
	if f.Format == frame.NV12 {
		for y := 0; y < f.Height; y++ {
			if _, err := r.w.Write(f.Data[0][y*f.Pitch[0] : y*f.Pitch[0]+f.Width]); err != nil {
				return fmt.Errorf("record %s: %w", r.path, err)
			}
		}
		for y := 0; y < ch; y++ {
			row := f.Data[1][y*f.Pitch[1]:]
			for x := 0; x < cw; x++ {
				u[y*cw+x], v[y*cw+x] = row[2*x], row[2*x+1]
			}
		}
	} else {
		lrow := buf[:0]
		if cap(r.scratch) < 2*cw*ch*bps+f.Width*2 {
			r.scratch = make([]byte, 2*cw*ch*bps+f.Width*2)
			buf = r.scratch[:2*cw*ch*bps]
			u, v = buf[:cw*ch*bps], buf[cw*ch*bps:]
		}
		lrow = r.scratch[2*cw*ch*bps : 2*cw*ch*bps+f.Width*2]
		yp, cp := f.Plane16(0), f.Plane16(1)
		for y := 0; y < f.Height; y++ {
			row := yp[y*f.Pitch[0]/2:]
			for x := 0; x < f.Width; x++ {
				binary.LittleEndian.PutUint16(lrow[2*x:], row[x]>>6)
			}
			if _, err := r.w.Write(lrow); err != nil {
				return fmt.Errorf("record %s: %w", r.path, err)
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
	if _, err := r.w.Write(buf); err != nil {
		return fmt.Errorf("record %s: %w", r.path, err)
	}
	r.frames++
	return nil
}

// Close flushes the stream and closes the file CreateRecord opened.
func (r *Record) Close() error {
	err := r.header()
	if ferr := r.w.Flush(); err == nil {
		err = ferr
	}
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

// Close closes the file.
func (y *Y4MReader) Close() error { return y.f.Close() }
