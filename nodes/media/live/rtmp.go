package live

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/abema/go-mp4"
	"github.com/bluenviron/gortmplib"
	"github.com/bluenviron/gortmplib/pkg/message"
)

// RTMPConfig is a listener that encoders (OBS, ffmpeg, hardware
// encoders) publish to, at rtmp://ADDRESS:PORT/live/KEY.
type RTMPConfig struct {
	Config
	// Key is the stream key: a publisher to any other is refused.
	Key string
}

// String is the URL an encoder pushes to, up to its key (left out: a
// stream key is a secret, never in a log or an error).
func (c RTMPConfig) String() string { return "rtmp://" + c.listenAddr() + "/live/" }

// rtmpApp is the application part of the URL a publisher pushes to.
const rtmpApp = "/live/"

// rtmpInput listens for its whole life: each publisher that brings the
// key while none does is the next connection; the others are refused
// (counted, and said in the input's error).
type rtmpInput struct {
	cfg    RTMPConfig
	ln     net.Listener
	stats  Stats
	next   chan *rtmpConn // an accepted publisher, handed to Connect
	closed chan struct{}
	once   sync.Once

	mu  sync.Mutex
	cur *rtmpConn // the publisher on the key, from acceptance to its end
}

// NewRTMP binds the listener (loopback unless an address is given) and
// starts accepting publishers.
func NewRTMP(cfg RTMPConfig) (Input, error) {
	if cfg.Key == "" || strings.ContainsAny(cfg.Key, "/?") {
		return nil, fmt.Errorf("rtmp input: stream key %q: give one word (no / or ?), the last part of rtmp://HOST:PORT/live/KEY", cfg.Key)
	}
	ln, err := net.Listen("tcp", cfg.listenAddr())
	if err != nil {
		return nil, fmt.Errorf("rtmp input on %s: %w", cfg.listenAddr(), err)
	}
	r := &rtmpInput{cfg: cfg, ln: ln, next: make(chan *rtmpConn), closed: make(chan struct{})}
	go r.accept()
	return r, nil
}

// Addr is where the listener is bound (the port the system chose for 0).
func (r *rtmpInput) Addr() net.Addr { return r.ln.Addr() }

func (r *rtmpInput) Stats() *Stats { return &r.stats }

func (r *rtmpInput) accept() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			select {
			case <-r.closed:
				return
			default:
			}
			r.stats.SetErr(fmt.Errorf("rtmp input: accepting: %w", err))
			time.Sleep(10 * time.Millisecond) // a full descriptor table: not again at once
			continue
		}
		go func() {
			if err := r.publisher(c); err != nil {
				c.Close()
				r.stats.SetErr(err)
			}
		}()
	}
}

// refused is a publisher turned away: counted, told so over RTMP, and
// why said in the input's error.
func (r *rtmpInput) refused(sc *gortmplib.ServerConn, err error) error {
	r.stats.SetErr(err)
	r.stats.Refused.Add(1)
	sc.RejectAction()
	return err
}

// publisher takes one TCP connection through RTMP's handshake to its
// publish command, and hands it to Connect if it brings the key while no
// other publisher holds it.
func (r *rtmpInput) publisher(c net.Conn) error {
	from := c.RemoteAddr()
	c.SetDeadline(time.Now().Add(max(r.cfg.lossTimeout(), 5*time.Second)))
	sc := &gortmplib.ServerConn{RW: c}
	if err := sc.Initialize(); err != nil {
		return fmt.Errorf("rtmp input: %s is no RTMP publisher (%v)", from, err)
	}
	if err := sc.AcceptConn(); err != nil {
		return fmt.Errorf("rtmp input: %s: %v", from, err)
	}
	if !sc.Publish {
		return r.refused(sc, fmt.Errorf("rtmp input: refused %s, which asked to play: this source only takes a publisher", from))
	}
	if sc.URL.Path != rtmpApp+r.cfg.Key {
		return r.refused(sc, fmt.Errorf("rtmp input: refused a publisher from %s: wrong stream key or application (push to %s with the source's key)", from, r.cfg))
	}
	pr, pw := io.Pipe()
	conn := &rtmpConn{in: r, nc: c, sc: sc, pr: pr, pw: pw}
	r.mu.Lock()
	if r.cur != nil {
		r.mu.Unlock()
		return r.refused(sc, fmt.Errorf("rtmp input: refused a second publisher from %s: %s already publishes on this key", from, r.cur.nc.RemoteAddr()))
	}
	r.cur = conn
	r.mu.Unlock()
	select {
	case r.next <- conn:
		return nil
	case <-r.closed:
		conn.Close()
		return nil
	}
}

func (r *rtmpInput) Connect() (io.ReadCloser, error) {
	r.stats.Await()
	select {
	case <-r.closed:
		return nil, ErrClosed
	case c := <-r.next:
		c.start()
		r.stats.Connections.Add(1)
		r.stats.SetState(Live)
		r.stats.SetErr(nil)
		return c, nil
	}
}

func (r *rtmpInput) Close() error {
	r.once.Do(func() {
		close(r.closed)
		r.ln.Close()
		r.mu.Lock()
		c := r.cur
		r.mu.Unlock()
		if c != nil {
			c.Close()
		}
	})
	return nil
}

// rtmpConn is one publisher's video as an Annex B elementary stream: its
// sequence header's parameter sets, then each access unit's NAL units
// behind start codes, written by a goroutine that reads the RTMP
// messages (es.NewLive reads it as it reads a transport stream).
type rtmpConn struct {
	in   *rtmpInput
	nc   net.Conn
	sc   *gortmplib.ServerConn
	pr   *io.PipeReader
	pw   *io.PipeWriter
	once sync.Once
}

func (c *rtmpConn) start() {
	go func() {
		err := c.pump(c.pw)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = ErrLost
		}
		c.pw.CloseWithError(err)
		c.release()
	}()
}

// pump reads the publisher's messages until it ends, writing its video.
func (c *rtmpConn) pump(w io.Writer) error {
	st := &c.in.stats
	if err := c.sc.AcceptAction(); err != nil {
		return fmt.Errorf("rtmp input: accepting the publisher: %w", err)
	}
	var v flvVideo
	var out []byte
	seen := c.sc.BytesReceived()
	for {
		c.nc.SetDeadline(time.Now().Add(c.in.cfg.lossTimeout()))
		msg, err := c.sc.Read()
		if err != nil {
			return fmt.Errorf("rtmp input: %w", err)
		}
		now := c.sc.BytesReceived()
		st.received(int(now-seen), time.Now())
		seen = now
		if out, err = v.annexB(msg, out[:0]); err != nil {
			return fmt.Errorf("rtmp input: %w", err)
		}
		if len(out) > 0 {
			if _, err := w.Write(out); err != nil {
				return err
			}
		}
	}
}

// flvVideo turns a publisher's video messages into an Annex B
// elementary stream: a sequence header's (legacy FLV or Enhanced RTMP)
// parameter sets, then each access unit's length-prefixed NAL units
// behind start codes. Nothing comes out before the first sequence header;
// audio and other messages are let go.
type flvVideo struct {
	codec  message.FourCC // 0 before the first sequence header
	length int            // the NAL units' length prefix, in bytes
}

// annexB appends msg's video, if it carries any, to out.
func (v *flvVideo) annexB(msg message.Message, out []byte) ([]byte, error) {
	switch m := msg.(type) {
	case *message.Video:
		switch {
		case m.Type == message.VideoTypeConfig:
			return v.sequenceStart(m.AVCConfig, m.HEVCConfig, out)
		case m.Type == message.VideoTypeAU:
			return v.units(m.AU, out)
		}
	case *message.VideoExSequenceStart:
		if m.AVCConfig == nil && m.HEVCConfig == nil {
			return out, fmt.Errorf("the publisher sends %v video: onair decodes H.264 or HEVC (set the encoder to one)", m.FourCC)
		}
		return v.sequenceStart(m.AVCConfig, m.HEVCConfig, out)
	case *message.VideoExCodedFrames:
		return v.units(m.Payload, out)
	case *message.VideoExFramesX:
		return v.units(m.Payload, out)
	}
	return out, nil
}

// sequenceStart starts (or repeats) the stream's parameter sets, from an
// H.264 or an HEVC sequence header: a change of codec mid-stream is
// refused.
func (v *flvVideo) sequenceStart(avc *mp4.AVCDecoderConfiguration, hevc *mp4.HvcC, out []byte) ([]byte, error) {
	codec, lengthMinusOne := message.FourCCAVC, uint8(0)
	switch {
	case avc != nil:
		lengthMinusOne = avc.LengthSizeMinusOne
	case hevc != nil:
		codec, lengthMinusOne = message.FourCCHEVC, hevc.LengthSizeMinusOne
	default:
		return out, errors.New("a video sequence header of neither H.264 nor HEVC: onair decodes those two (set the encoder to one)")
	}
	if v.codec != 0 && v.codec != codec {
		return out, fmt.Errorf("the publisher changed its codec mid-stream (to %v): refused; publish again to start anew", codec)
	}
	v.codec, v.length = codec, int(lengthMinusOne)+1
	if avc != nil {
		for _, p := range avc.SequenceParameterSets {
			out = startCode(out, p.NALUnit)
		}
		for _, p := range avc.PictureParameterSets {
			out = startCode(out, p.NALUnit)
		}
		return out, nil
	}
	for _, typ := range []uint8{32, 33, 34} { // VPS, SPS, PPS: in the order a decoder needs them
		for _, a := range hevc.NaluArrays {
			if a.NaluType == typ {
				for _, n := range a.Nalus {
					out = startCode(out, n.NALUnit)
				}
			}
		}
	}
	return out, nil
}

// units appends an access unit's length-prefixed NAL units (AVCC) behind
// start codes; before any sequence header it is let go (a decoder could
// not start there).
func (v *flvVideo) units(au []byte, out []byte) ([]byte, error) {
	if v.codec == 0 {
		return out, nil
	}
	return avccToAnnexB(au, v.length, out)
}

// avccToAnnexB appends the NAL units of b, each behind a big-endian
// length of size bytes (1, 2 or 4), to out behind start codes.
func avccToAnnexB(b []byte, size int, out []byte) ([]byte, error) {
	if size != 1 && size != 2 && size != 4 {
		return out, fmt.Errorf("a NAL unit length of %d bytes (the sequence header's): want 1, 2 or 4", size)
	}
	for off := 0; off < len(b); {
		if len(b)-off < size {
			return out, fmt.Errorf("an access unit cut inside a NAL unit's length (byte %d of %d)", off, len(b))
		}
		n := 0
		for _, c := range b[off : off+size] {
			n = n<<8 | int(c)
		}
		off += size
		if n > len(b)-off {
			return out, fmt.Errorf("a NAL unit of %d bytes at byte %d of a %d-byte access unit", n, off, len(b))
		}
		out = startCode(out, b[off:off+n])
		off += n
	}
	return out, nil
}

// startCode appends one NAL unit behind a 4-byte start code.
func startCode(out, nal []byte) []byte {
	if len(nal) == 0 {
		return out
	}
	return append(append(out, 0, 0, 0, 1), nal...)
}

func (c *rtmpConn) Read(p []byte) (int, error) {
	n, err := c.pr.Read(p)
	if err != nil {
		c.in.stats.SetState(Lost)
		if err != io.EOF && !errors.Is(err, ErrLost) {
			c.in.stats.SetErr(err)
		}
	}
	return n, err
}

// Close ends the publisher's connection and its stream.
func (c *rtmpConn) Close() error {
	c.release()
	c.pr.Close()
	return nil
}

// release ends the publisher's connection; the key is free for the next.
func (c *rtmpConn) release() {
	c.once.Do(func() {
		c.nc.Close()
		c.in.mu.Lock()
		if c.in.cur == c {
			c.in.cur = nil
		}
		c.in.mu.Unlock()
	})
}
