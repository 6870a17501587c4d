package media

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/nodes/media/es"
)

// DecodeConfig describes an HEVC or H.264 file decoded in host memory.
type DecodeConfig struct {
	Bin   string // the ffmpeg binary; "" is "ffmpeg" on $PATH
	Path  string
	Codec es.Codec // what the source declares; a transport stream's first stream of it is read
	// Format, Width and Height are what the source declares; the stream
	// must agree (8-bit video as nv12, 10-bit as p010, 4:2:0).
	Format frame.Format
	Width  int
	Height int
	// Loop plays the file again from its start after its end, without a
	// gap: the decoder is fed the stream again.
	Loop bool
	// Threads is the decoder's threads; 0 means 1 (a show has many sources
	// and the CPU backend draws on the remaining cores).
	Threads int
	// Live, when set, is a live transport stream read instead of the file
	// at Path (which then only names it): es.NewLive, from its first
	// sequence parameter set, never looped; ffmpeg starts at once, with no
	// probing ahead (its low-delay flags would drop reordered frames).
	Live io.Reader
}

// Decoder decodes a file with an external ffmpeg: onair reads the file
// into access units (package es: Annex B or MPEG-TS, checked against the
// source's declared format and size first), feeds them to ffmpeg's stdin
// from a goroutine, and reads the raw NV12/P010 frames ffmpeg writes to its
// stdout. A loop feeds the stream again from its start, so frames never
// stop between passes.
//
// A parameter set that changes the size or format in the middle of the
// stream is refused: the rest of the pass is not fed (the stream starts
// again when looping, or ends), and a warning says where. ffmpeg's error
// lines (a corrupt or truncated picture, which it conceals) are warnings
// too. Warnings never stop the frames; Next's errors do.
type Decoder struct {
	cfg   DecodeConfig
	info  es.Info
	start es.Start
	cmd   *exec.Cmd
	out   *bufio.Reader
	outc  io.Closer
	in    io.WriteCloser

	stderr tailBuffer
	fed    chan struct{} // closed when the feeder has finished
	logged chan struct{} // closed when stderr is read to its end

	mu           sync.Mutex
	warnings     []string
	dropped      int
	feedErr      error
	passes       int64
	passPictures int // pictures in the first pass, once it was fed whole
	killed       bool

	waitOnce sync.Once
	waitErr  error
}

const maxWarnings = 32

// CheckStream says whether a stream fits a source that declares format f
// and size w×h, and if not, what to change.
func CheckStream(path string, info es.Info, f frame.Format, w, h int) error {
	want := 8
	if f == frame.P010 {
		want = 10
	}
	switch {
	case info.ChromaFormat != 1:
		return fmt.Errorf("%s holds %v video: onair plays 4:2:0 only (NV12 or P010); convert it to 4:2:0", path, info)
	case info.Codec == es.H264 && info.BitDepth != 8:
		return fmt.Errorf("%s holds %v video: NVDEC decodes 8-bit H.264 only; encode it as 8-bit H.264 or as HEVC", path, info)
	case info.BitDepth != 8 && info.BitDepth != 10 || info.BitDepthChroma != info.BitDepth:
		return fmt.Errorf("%s holds %v video (chroma %d-bit): onair plays 8-bit (nv12) and 10-bit (p010) video", path, info, info.BitDepthChroma)
	case info.BitDepth != want || info.Width != w || info.Height != h:
		fmtName := "nv12"
		if info.BitDepth == 10 {
			fmtName = "p010"
		}
		return fmt.Errorf("%s holds %v video, but the source declares %dx%d %v: set the source's size = \"%dx%d\" and format = %q", path, info, w, h, f, info.Width, info.Height, fmtName)
	}
	return nil
}

// UnusableSPS is the warning for an access unit inside a stream whose
// sequence parameter set cannot be used (au.SPSError): the stream plays up
// to there, as it does up to a change of size.
func UnusableSPS(path string, au es.AccessUnit) string {
	return fmt.Sprintf("%s at access unit %d (byte %d): %v: onair plays the stream up to there", path, au.Index, au.Offset, au.SPSError)
}

// OpenDecoder opens and checks the file and starts ffmpeg.
func OpenDecoder(cfg DecodeConfig) (*Decoder, error) {
	if cfg.Format != frame.NV12 && cfg.Format != frame.P010 || cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width%2 != 0 || cfg.Height%2 != 0 {
		return nil, fmt.Errorf("decoding %s: %v %dx%d: want nv12 or p010 frames of an even size", cfg.Path, cfg.Format, cfg.Width, cfg.Height)
	}
	bin := cfg.Bin
	if bin == "" {
		bin = "ffmpeg"
	}
	bin, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("decoding %s on the CPU needs ffmpeg: %w (install ffmpeg, or run the show on the cuda backend)", cfg.Path, err)
	}
	var rd *es.Reader
	if cfg.Live != nil {
		rd, err = es.NewLive(cfg.Live, cfg.Path, cfg.Codec)
	} else {
		rd, err = es.Open(cfg.Path, cfg.Codec)
	}
	if err != nil {
		return nil, err
	}
	info, _ := rd.Info()
	if err := CheckStream(cfg.Path, info, cfg.Format, cfg.Width, cfg.Height); err != nil {
		rd.Close()
		return nil, err
	}
	threads := cfg.Threads
	if threads <= 0 {
		threads = 1
	}
	demux, pix := "hevc", "nv12"
	if rd.Codec() == es.H264 {
		demux = "h264"
	}
	if cfg.Format == frame.P010 {
		pix = "p010le"
	}
	d := &Decoder{cfg: cfg, info: info, start: rd.Start(), fed: make(chan struct{}), logged: make(chan struct{})}
	args := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-threads", strconv.Itoa(threads)}
	if cfg.Live != nil {
		args = append(args, "-probesize", "32", "-analyzeduration", "0")
	}
	args = append(args, "-f", demux, "-i", "pipe:0", "-map", "0:v:0", "-f", "rawvideo", "-pix_fmt", pix, "pipe:1")
	d.cmd = exec.Command(bin, args...)
	in, err1 := d.cmd.StdinPipe()
	out, err2 := d.cmd.StdoutPipe()
	errp, err3 := d.cmd.StderrPipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		rd.Close()
		return nil, err
	}
	if err := d.cmd.Start(); err != nil {
		rd.Close()
		return nil, fmt.Errorf("starting ffmpeg to decode %s: %w", cfg.Path, err)
	}
	d.in, d.outc = in, out
	d.out = bufio.NewReaderSize(out, 1<<16)
	go d.feed(rd)
	go d.readStderr(errp)
	return d, nil
}

// Start is where a live stream's pictures start (es.Reader.Start), for
// its sound's decoder (LiveAudio.Start).
func (d *Decoder) Start() es.Start { return d.start }

// Info is what the stream's first sequence parameter set says.
func (d *Decoder) Info() es.Info { return d.info }

// feed writes the stream's access units to ffmpeg, pass after pass when
// looping, and closes ffmpeg's input at the end.
func (d *Decoder) feed(rd *es.Reader) {
	defer close(d.fed)
	defer rd.Close()
	defer d.in.Close()
	// First of the deferred: Next sees the error once ffmpeg's input closes.
	defer panics.Catch("feeding "+d.cfg.Path+" to ffmpeg", nil, d.setFeedErr)
	for {
		pictures, err := d.feedPass(rd)
		d.mu.Lock()
		d.passes++
		if d.passes == 1 && err == nil {
			d.passPictures = pictures
		}
		d.mu.Unlock()
		if err != nil {
			d.setFeedErr(err)
			return
		}
		if !d.cfg.Loop {
			return
		}
		if pictures == 0 {
			d.setFeedErr(fmt.Errorf("%s: a pass of the stream holds no picture to show", d.cfg.Path))
			return
		}
		if err := rd.Rewind(); err != nil {
			d.setFeedErr(fmt.Errorf("%s: starting the loop again: %w", d.cfg.Path, err))
			return
		}
	}
}

// feedPass feeds the stream once. A change of format ends the pass with a
// warning; a write error (ffmpeg gone) or a read error ends the feeding.
func (d *Decoder) feedPass(rd *es.Reader) (pictures int, err error) {
	for {
		au, err := rd.Next()
		if err == io.EOF {
			return pictures, nil
		}
		if err != nil {
			return pictures, err
		}
		if au.Info != nil && !au.Info.SameFormat(d.info) {
			d.warn(fmt.Sprintf("%s changes from %v to %v at access unit %d (byte %d): onair refuses a change of size or format inside a stream, and plays the stream up to there", d.cfg.Path, d.info, *au.Info, au.Index, au.Offset))
			return pictures, nil
		}
		if au.Info == nil && au.SPSError != nil {
			d.warn(UnusableSPS(d.cfg.Path, au))
			return pictures, nil
		}
		if au.Pictures {
			pictures++
		}
		if _, err := d.in.Write(au.Data); err != nil {
			return pictures, errStopped
		}
	}
}

var errStopped = errors.New("ffmpeg stopped reading")

func (d *Decoder) setFeedErr(err error) {
	d.mu.Lock()
	if d.feedErr == nil && err != errStopped {
		d.feedErr = err
	}
	d.mu.Unlock()
}

func (d *Decoder) readStderr(r io.Reader) {
	defer close(d.logged)
	defer panics.Catch("reading ffmpeg's messages on "+d.cfg.Path, nil, d.setFeedErr)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		d.stderr.Write([]byte(line + "\n"))
		if line != "" {
			d.warn("ffmpeg decoding " + d.cfg.Path + ": " + line)
		}
	}
}

func (d *Decoder) warn(s string) {
	d.mu.Lock()
	if len(d.warnings) < maxWarnings {
		d.warnings = append(d.warnings, s)
	} else {
		d.dropped++
	}
	d.mu.Unlock()
}

// Warnings returns what went wrong without stopping the frames since the
// last call: refused changes of format, ffmpeg's error lines.
func (d *Decoder) Warnings() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.warnings
	if d.dropped > 0 {
		w = append(w, fmt.Sprintf("ffmpeg decoding %s: %d more warnings", d.cfg.Path, d.dropped))
		d.dropped = 0
	}
	d.warnings = nil
	return w
}

// Passes is how many times the stream has been fed to its end (or to a
// refused change).
func (d *Decoder) Passes() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.passes
}

// PassPictures is how many pictures one pass of the stream holds, once the
// first pass has been fed whole (0 before): a looping source's frame i
// from the decoder's start is picture i mod PassPictures of its file. The
// last picture of a pass comes out of ffmpeg only after the pass is fed,
// so it is known by then.
func (d *Decoder) PassPictures() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.passPictures
}

// Next reads the next decoded frame into dst, a tightly packed frame of
// the declared format and size (as pools make them). It returns io.EOF
// after the last frame of a stream that does not loop, and an error that
// says what happened when ffmpeg fails or the file cannot be read.
func (d *Decoder) Next(dst *frame.Frame) error {
	if dst.Format != d.cfg.Format || dst.Width != d.cfg.Width || dst.Height != d.cfg.Height {
		return fmt.Errorf("decoding %s: frame is %v %dx%d, want %v %dx%d", d.cfg.Path, dst.Format, dst.Width, dst.Height, d.cfg.Format, d.cfg.Width, d.cfg.Height)
	}
	buf := dst.Bytes()
	if len(buf) != d.cfg.Format.Size(d.cfg.Width, d.cfg.Height) {
		return fmt.Errorf("decoding %s: the frame is not tightly packed", d.cfg.Path)
	}
	n, err := io.ReadFull(d.out, buf)
	if err == nil {
		return nil
	}
	werr := d.wait()
	d.mu.Lock()
	feedErr, killed := d.feedErr, d.killed
	d.mu.Unlock()
	switch {
	case killed:
		return fmt.Errorf("decoding %s: stopped", d.cfg.Path)
	case feedErr != nil:
		return fmt.Errorf("decoding %s: %w", d.cfg.Path, feedErr)
	case werr != nil:
		return fmt.Errorf("ffmpeg decoding %s failed (%v): %s", d.cfg.Path, werr, lastLines(d.stderr.String(), 3))
	case n > 0:
		return fmt.Errorf("ffmpeg decoding %s ended inside a frame (%d of %d bytes)", d.cfg.Path, n, len(buf))
	case d.cfg.Loop:
		return fmt.Errorf("ffmpeg decoding %s ended although the source loops: %s", d.cfg.Path, lastLines(d.stderr.String(), 3))
	}
	return io.EOF
}

// wait reaps the process once its output has ended.
func (d *Decoder) wait() error {
	d.waitOnce.Do(func() {
		<-d.logged
		<-d.fed
		d.waitErr = d.cmd.Wait()
	})
	return d.waitErr
}

// Kill stops ffmpeg at once; a Next blocked on it returns. It may be
// called from any goroutine.
func (d *Decoder) Kill() {
	d.mu.Lock()
	d.killed = true
	d.mu.Unlock()
	if d.cmd.Process != nil {
		d.cmd.Process.Kill()
	}
}

// Close stops ffmpeg and the feeder and waits for both.
func (d *Decoder) Close() error {
	d.Kill()
	d.wait()
	return nil
}
