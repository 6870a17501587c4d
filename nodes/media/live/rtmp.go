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

	"github.com/bluenviron/gortmplib"
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

// rtmpConn is one publisher's stream remuxed to MPEG-TS (rtmpTS), written
// by a goroutine that reads the RTMP messages: es.NewLive and the sound's
// decoder read it as they read an srt or udp source's.
type rtmpConn struct {
	in   *rtmpInput
	nc   net.Conn
	sc   *gortmplib.ServerConn
	pr   *io.PipeReader
	pw   *io.PipeWriter
	once sync.Once

	mu      sync.Mutex
	noSound error // why the stream carries no sound (rtmpTS.noSound)
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

// NoSound says why the publisher's stream carries no sound: it sends
// sound in a codec onair does not take from RTMP. It is nil while the
// stream carries its sound, or when the publisher sends none.
func (c *rtmpConn) NoSound() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.noSound
}

// pump reads the publisher's messages until it ends, writing its stream.
func (c *rtmpConn) pump(w io.Writer) error {
	st := &c.in.stats
	if err := c.sc.AcceptAction(); err != nil {
		return fmt.Errorf("rtmp input: accepting the publisher: %w", err)
	}
	var ts rtmpTS
	seen := c.sc.BytesReceived()
	for {
		c.nc.SetDeadline(time.Now().Add(c.in.cfg.lossTimeout()))
		msg, err := c.sc.Read()
		unread := err != nil && ts.unreadSound(err)
		if err != nil && !unread {
			if ts.end() == nil && ts.buf.Len() > 0 {
				w.Write(ts.buf.Bytes())
			}
			return fmt.Errorf("rtmp input: %w", err)
		}
		now := c.sc.BytesReceived()
		st.received(int(now-seen), time.Now())
		seen = now
		if !unread { // a message of sound gortmplib does not parse is read whole: the stream goes on
			if err := ts.message(msg); err != nil {
				return fmt.Errorf("rtmp input: %w", err)
			}
		}
		if ts.noSound != nil {
			c.mu.Lock()
			c.noSound = ts.noSound
			c.mu.Unlock()
		}
		if ts.buf.Len() > 0 {
			if _, err := w.Write(ts.buf.Bytes()); err != nil {
				return err
			}
			ts.buf.Reset()
		}
	}
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
