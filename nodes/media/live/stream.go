package live

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// StreamConfig is anything ffmpeg reads by URL or path (RTSP, HLS, RIST,
// MP4, MOV, MKV...), remuxed without re-encoding to MPEG-TS on a pipe.
type StreamConfig struct {
	Config
	URL string
	Bin string // the ffmpeg binary; "" is "ffmpeg" on $PATH
}

// isFile says whether url names a file (no scheme, or file:): ffmpeg
// then reads it at its own rate (-re), as a camera would send it.
func isFile(url string) bool {
	i := strings.Index(url, "://")
	return i < 0 || strings.HasPrefix(url, "file:")
}

// RemuxArgs is the ffmpeg command line that reads url and writes its
// first video stream, as it is, as MPEG-TS on standard output.
func RemuxArgs(url string) []string {
	args := []string{"-hide_banner", "-nostdin", "-loglevel", "error"}
	if isFile(url) {
		args = append(args, "-re")
	}
	return append(args, "-i", url, "-map", "0:v:0", "-c", "copy", "-f", "mpegts", "pipe:1")
}

type streamInput struct {
	cfg    StreamConfig
	bin    string
	stats  Stats
	tries  int
	closed chan struct{}
	once   sync.Once

	mu  sync.Mutex
	cur *streamConn
}

// NewStream finds ffmpeg; each Connect starts one process.
func NewStream(cfg StreamConfig) (Input, error) {
	bin := cfg.Bin
	if bin == "" {
		bin = "ffmpeg"
	}
	bin, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("stream %s needs ffmpeg: %w (install ffmpeg)", cfg.URL, err)
	}
	return &streamInput{cfg: cfg, bin: bin, closed: make(chan struct{})}, nil
}

func (s *streamInput) Stats() *Stats { return &s.stats }

func (s *streamInput) Connect() (io.ReadCloser, error) {
	s.stats.SetState(Connecting)
	select {
	case <-s.closed:
		return nil, ErrClosed
	case <-time.After(backoff(s.tries)):
	}
	s.tries++
	cmd := exec.Command(s.bin, RemuxArgs(s.cfg.URL)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &streamConn{in: s, cmd: cmd, out: out.(*os.File), cc: continuity{stamps: &s.stats.stamps}}
	cmd.Stderr = &c.stderr
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.closed:
		return nil, ErrClosed
	default:
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("stream %s: starting ffmpeg: %w", s.cfg.URL, err)
	}
	s.cur = c
	s.stats.Connections.Add(1)
	return c, nil
}

func (s *streamInput) Close() error {
	s.once.Do(func() {
		close(s.closed)
		closeCurrent(&s.mu, &s.cur)
	})
	return nil
}

type streamConn struct {
	in     *streamInput
	cmd    *exec.Cmd
	out    *os.File
	stderr tail
	cc     continuity
	once   sync.Once
	live   bool
}

func (c *streamConn) Read(p []byte) (int, error) {
	st := &c.in.stats
	c.out.SetReadDeadline(time.Now().Add(c.in.cfg.lossTimeout()))
	n, err := c.out.Read(p)
	if n > 0 {
		if !c.live {
			c.live, c.in.tries = true, 0
			st.SetState(Live)
			st.SetErr(nil)
		}
		st.received(n, time.Now())
		st.Continuity.Add(c.cc.feed(p[:n]))
		return n, nil
	}
	st.SetState(Lost)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return 0, ErrLost
	}
	werr := c.wait()
	if msg := c.stderr.String(); msg != "" {
		return 0, fmt.Errorf("stream %s: ffmpeg: %s", c.in.cfg.URL, msg)
	}
	if werr != nil {
		return 0, fmt.Errorf("stream %s: ffmpeg: %w", c.in.cfg.URL, werr)
	}
	return 0, io.EOF
}

func (c *streamConn) wait() error {
	var err error
	c.once.Do(func() { err = c.cmd.Wait() })
	return err
}

// Close ends ffmpeg and reaps it.
func (c *streamConn) Close() error {
	c.cmd.Process.Kill()
	c.wait()
	return nil
}

// tail keeps the last lines a process wrote (at most 2 KiB), for errors.
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.b = append(t.b, p...)
	if len(t.b) > 2048 {
		t.b = t.b[len(t.b)-2048:]
	}
	t.mu.Unlock()
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}
