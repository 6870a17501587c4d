package media

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
)

// FFmpegConfig describes an ffmpeg output: raw frames piped to an external
// ffmpeg started as
//
//	ffmpeg -hide_banner -loglevel error -f rawvideo -pix_fmt nv12|p010le -s WxH -r R
//	       -color_range tv -colorspace bt709 -color_primaries bt709 -color_trc bt709 -i pipe:0
//	       -color_range tv -colorspace bt709 -color_primaries bt709 -color_trc bt709 ARGS...
//
// The colour options tag the raw input (which carries no tags of its own)
// and, repeated as output options, the output's stream, so that players
// and ffprobe read the show's range, matrix, primaries and transfer; ARGS
// may override them.
type FFmpegConfig struct {
	Bin  string   // the ffmpeg binary; "" is "ffmpeg" on $PATH
	Args []string // the user's arguments after the input, e.g. -c:v libx264 -f mpegts out.ts
	// Dir is the directory the process runs in, where relative paths in
	// Args resolve (a show's: like every other path in it); "" is ours.
	Dir    string
	Format frame.Format
	Width  int
	Height int
	Rate   frame.Rational
	// Colour is what the frames carry; zero is frame.BT709.
	Colour frame.Colour
	// Queue is how many frames wait for the process at most; when full the
	// oldest is dropped and counted. 0 means 8.
	Queue int
	// StallTimeout is how long one frame may take to go into the pipe
	// before the process counts as stalled and is killed. 0 means 2 s.
	StallTimeout time.Duration
	// BackoffMin and BackoffMax bound the wait before a restart; it doubles
	// after every failure and goes back to BackoffMin once a process has
	// taken frames for a while. 0 means 100 ms and 5 s.
	BackoffMin, BackoffMax time.Duration
	// OnEvent, if set, is called from the output's goroutine for every start,
	// exit, stall and failed start. It must not block.
	OnEvent func(FFmpegEvent)
	// Timecode, unless Args set -timecode themselves, starts each process
	// (the first, and every restart) once a frame waits for it, with
	// -timecode and that frame's Meta.Timecode before Args: the file's
	// timecode names its first picture.
	Timecode bool
	// Audio gives the process the bus's sound as a second input (input 1)
	// on a pipe of its own (descriptor 4; 3 is -progress): each frame's Meta.Audio, 48 kHz
	// stereo float32 (-f f32le -ar 48000 -ac 2), written right after its
	// picture, so Args can map and encode it ("-map", "0:v", "-map", "1:a",
	// "-c:a", "aac"). A block waits as long as a picture may (StallTimeout).
	Audio bool
	// Prepare, if set, is called before each process starts with Args and
	// returns the arguments that process runs with (a recording that must
	// not overwrite what an earlier process wrote picks its file here).
	Prepare func(args []string) []string
}

// outputAudioPipe is where an output's ffmpeg reads the bus's sound: the
// second of cmd.ExtraFiles (the first carries -progress).
const outputAudioPipe = "pipe:4"

// FFmpegEventKind says what happened to the process.
type FFmpegEventKind uint8

const (
	FFmpegStarted     FFmpegEventKind = iota // a process started (the first, or a restart)
	FFmpegExited                             // a process exited before Close (a crash, a kill, or its own end)
	FFmpegStalled                            // a frame waited StallTimeout for the pipe; the process was killed
	FFmpegStartFailed                        // the binary could not be started; retried after backoff
)

func (k FFmpegEventKind) String() string {
	return [...]string{"started", "exited", "stalled", "start failed"}[k]
}

// FFmpegEvent reports one change of the process.
type FFmpegEvent struct {
	Kind     FFmpegEventKind
	PID      int
	Restarts int64
	Err      error // why it exited, stalled or did not start (with its last stderr lines)
}

// FFmpegStats is a snapshot of an ffmpeg output's counters.
type FFmpegStats struct {
	Written int64 // frames that went into a process's pipe
	// Encoded and Bytes are what the processes reported out of their
	// encoders (ffmpeg's -progress: frame= and total_size=), summed over
	// every process; Speed is the running one's encoding speed against
	// real time (1 keeps up), 0 before its first report.
	Encoded   int64
	Bytes     int64
	Speed     float64
	Dropped   int64 // frames dropped because the queue was full
	Restarts  int64 // processes started after the first
	Exits     int64 // processes that exited or were killed before Close
	Stalls    int64
	Running   bool
	PID       int
	LastError string
	// Delivering is whether the running process has written output (its
	// -progress reports bytes out): a stream's destination took it, a
	// file is being written. Reconnects counts the processes that did so
	// after an earlier one failed (exited, stalled, did not start): a
	// destination that was down and came back.
	Delivering bool
	Reconnects int64
	// down: a process failed and none has delivered since; closed: Close
	// has finished.
	down, closed bool
}

// The states of an ffmpeg output (FFmpegStats.State).
const (
	FFmpegStarting   = "starting"   // no process has written output yet
	FFmpegDelivering = "delivering" // the running process writes output
	FFmpegRetrying   = "retrying"   // a process failed; the next has written nothing yet
	FFmpegStopped    = "stopped"    // closed
)

// State says where the output stands: FFmpegStarting, FFmpegDelivering,
// FFmpegRetrying or FFmpegStopped.
func (s FFmpegStats) State() string {
	switch {
	case s.closed:
		return FFmpegStopped
	case s.Running && s.Delivering:
		return FFmpegDelivering
	case s.down:
		return FFmpegRetrying
	}
	return FFmpegStarting
}

// FFmpeg is the ffmpeg output. Write never blocks: frames wait in a bounded
// queue that drops its oldest frame when full, and one goroutine feeds them to
// the process, watches it for exit and stalls, and restarts it with
// exponential backoff. Close writes what is queued, closes the pipe so
// ffmpeg can finish its file, and waits for it.
type FFmpeg struct {
	cfg  FFmpegConfig
	args []string
	user int // where the user's Args start in args

	mu      sync.Mutex
	queue   []*frame.Frame // ring
	head, n int
	closing bool
	stats   FFmpegStats
	cmd     *exec.Cmd

	wake chan struct{}
	stop chan struct{} // closed by Close
	done chan struct{}
}

// ColourArgs are ffmpeg's options for colour tags: -color_range,
// -colorspace (the matrix), -color_primaries and -color_trc (the
// transfer). The zero Colour is frame.BT709.
func ColourArgs(c frame.Colour) ([]string, error) {
	if c == (frame.Colour{}) {
		c = frame.BT709
	}
	names := []struct {
		opt, what, tag string
		m              map[string]string
	}{
		{"-color_range", "range", c.Range, map[string]string{"limited": "tv", "full": "pc"}},
		{"-colorspace", "matrix", c.Matrix, map[string]string{"bt709": "bt709", "bt601": "smpte170m", "bt2020nc": "bt2020nc"}},
		{"-color_primaries", "primaries", c.Primaries, map[string]string{"bt709": "bt709", "bt601": "smpte170m", "bt2020": "bt2020"}},
		{"-color_trc", "transfer", c.Transfer, map[string]string{"bt709": "bt709", "pq": "smpte2084", "hlg": "arib-std-b67", "srgb": "iec61966-2-1"}},
	}
	var out []string
	for _, n := range names {
		v, ok := n.m[n.tag]
		if !ok {
			return nil, fmt.Errorf("colour %s %q has no ffmpeg name (the show language's colour block takes the known ones)", n.what, n.tag)
		}
		out = append(out, n.opt, v)
	}
	return out, nil
}

// StartFFmpeg checks cfg, starts the process and the goroutine that feeds it.
// A process that fails to start is retried like one that exits; only a
// missing binary or a bad configuration is an error here.
func StartFFmpeg(cfg FFmpegConfig) (*FFmpeg, error) {
	if cfg.Bin == "" {
		cfg.Bin = "ffmpeg"
	}
	bin, err := exec.LookPath(cfg.Bin)
	if err != nil {
		return nil, fmt.Errorf("ffmpeg output: %w (install ffmpeg or set the output's binary)", err)
	}
	cfg.Bin = bin
	if err := checkRecord(cfg.Format, cfg.Width, cfg.Height, cfg.Rate); err != nil {
		return nil, fmt.Errorf("ffmpeg output: %w", err)
	}
	if len(cfg.Args) == 0 {
		return nil, fmt.Errorf("ffmpeg output: no arguments: give at least an output, e.g. [\"-c:v\", \"libx264\", \"out.mp4\"]")
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 8
	}
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = 2 * time.Second
	}
	if cfg.BackoffMin <= 0 {
		cfg.BackoffMin = 100 * time.Millisecond
	}
	if cfg.BackoffMax < cfg.BackoffMin {
		cfg.BackoffMax = max(5*time.Second, cfg.BackoffMin)
	}
	pix := "nv12"
	if cfg.Format == frame.P010 {
		pix = "p010le"
	}
	args := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", pix,
		"-s", strconv.Itoa(cfg.Width) + "x" + strconv.Itoa(cfg.Height), "-r", cfg.Rate.String()}
	colour, err := ColourArgs(cfg.Colour)
	if err != nil {
		return nil, fmt.Errorf("ffmpeg output: %w", err)
	}
	args = append(args, colour...)
	if cfg.Audio {
		// Two pipes: each input's queue long enough that ffmpeg never
		// waits on one while onair waits to write the other.
		args = append(args, "-thread_queue_size", "1024")
	}
	args = append(args, "-i", "pipe:0")
	args = append(args, colour...)
	if cfg.Audio {
		args = append(args, "-thread_queue_size", "1024", "-probesize", "32", "-analyzeduration", "0", "-f", "f32le", "-ar", strconv.Itoa(audio.Rate), "-ac", strconv.Itoa(audio.Channels), "-i", outputAudioPipe)
	}
	if cfg.Timecode && slices.Contains(cfg.Args, "-timecode") {
		cfg.Timecode = false // the user's own
	}
	o := &FFmpeg{
		cfg: cfg, args: append(args, cfg.Args...), user: len(args),
		queue: make([]*frame.Frame, cfg.Queue),
		wake:  make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go o.supervise()
	return o, nil
}

// Write queues f (retaining it) and returns at once. When the queue is full
// its oldest frame is released and counted as dropped.
func (o *FFmpeg) Write(f *frame.Frame) error {
	if f.Format != o.cfg.Format || f.Width != o.cfg.Width || f.Height != o.cfg.Height {
		return fmt.Errorf("ffmpeg output: frame is %v %dx%d, the output takes %v %dx%d", f.Format, f.Width, f.Height, o.cfg.Format, o.cfg.Width, o.cfg.Height)
	}
	o.mu.Lock()
	if o.closing {
		o.mu.Unlock()
		return errors.New("ffmpeg output: closed")
	}
	f.Retain()
	if o.n == len(o.queue) {
		old := o.queue[o.head]
		o.queue[o.head] = nil
		o.head = (o.head + 1) % len(o.queue)
		o.n--
		o.stats.Dropped++
		old.Release()
	}
	o.queue[(o.head+o.n)%len(o.queue)] = f
	o.n++
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return nil
}

func (o *FFmpeg) pop() (*frame.Frame, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == 0 {
		return nil, o.closing
	}
	f := o.queue[o.head]
	o.queue[o.head] = nil
	o.head = (o.head + 1) % len(o.queue)
	o.n--
	return f, false
}

// Stats returns the output's counters.
func (o *FFmpeg) Stats() FFmpegStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stats
}

// PID is the process id of the running ffmpeg, 0 when none runs.
func (o *FFmpeg) PID() int { return o.Stats().PID }

func (o *FFmpeg) event(e FFmpegEvent) {
	if o.cfg.OnEvent != nil {
		o.cfg.OnEvent(e)
	}
}

// tailBuffer keeps the last few KiB of a process's stderr.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-4096:]...)
	}
	t.mu.Unlock()
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(bytes.ToValidUTF8(t.buf, nil)))
}

func (o *FFmpeg) supervise() {
	defer close(o.done)
	backoff := o.cfg.BackoffMin
	first := true
	for {
		// An output closed before its first process started still writes
		// what was queued, as Close promises: it starts that process.
		if o.isClosing() && !(first && o.queued() > 0) {
			o.drop()
			return
		}
		if !first {
			o.mu.Lock()
			o.stats.Restarts++
			o.mu.Unlock()
		}
		first = false
		ran, closed := o.runOnce()
		if closed {
			return
		}
		if ran > 10*time.Second {
			backoff = o.cfg.BackoffMin
		}
		select {
		case <-time.After(backoff):
		case <-o.stop:
		}
		backoff = min(backoff*2, o.cfg.BackoffMax)
	}
}

func (o *FFmpeg) isClosing() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closing
}

// queued is how many frames wait for the process.
func (o *FFmpeg) queued() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n
}

// drop releases every queued frame.
func (o *FFmpeg) drop() {
	for {
		f, _ := o.pop()
		if f == nil {
			return
		}
		f.Release()
	}
}

// runOnce starts one process and feeds it until it exits, stalls, or the
// output closes. It returns how long the process ran and whether the output
// is closed (the process then finished cleanly or was killed).
func (o *FFmpeg) runOnce() (ran time.Duration, closed bool) {
	pr, pw, err := os.Pipe()
	if err != nil {
		o.fail(FFmpegStartFailed, 0, fmt.Errorf("ffmpeg output: pipe: %w", err))
		return 0, false
	}
	args := o.args
	if o.cfg.Prepare != nil {
		args = append(append([]string{}, o.args[:o.user]...), o.cfg.Prepare(slices.Clone(o.args[o.user:]))...)
	}
	if o.cfg.Timecode {
		tc, ok := o.nextTimecode()
		if !ok { // closed with nothing to write
			pr.Close()
			pw.Close()
			o.drop()
			return 0, true
		}
		args = append(append(append([]string{}, args[:o.user]...), "-timecode", tc), args[o.user:]...)
	}
	progR, progW, err := os.Pipe()
	if err != nil {
		pr.Close()
		pw.Close()
		o.fail(FFmpegStartFailed, 0, fmt.Errorf("ffmpeg output: pipe: %w", err))
		return 0, false
	}
	// -progress reports on the process's fd 3 (ExtraFiles[0]) every half
	// second and at its end; a global option, so it goes first.
	args = append([]string{"-progress", "pipe:3", "-stats_period", "0.5"}, args...)
	var stderr tailBuffer
	cmd := exec.Command(o.cfg.Bin, args...)
	cmd.Stdin, cmd.Stderr, cmd.Dir, cmd.ExtraFiles = pr, &stderr, o.cfg.Dir, []*os.File{progW}
	var sound *os.File // the sound's pipe, with Audio: ExtraFiles[1], fd 4
	if o.cfg.Audio {
		ar, aw, err := os.Pipe()
		if err != nil {
			pr.Close()
			pw.Close()
			progR.Close()
			progW.Close()
			o.fail(FFmpegStartFailed, 0, fmt.Errorf("ffmpeg output: pipe: %w", err))
			return 0, false
		}
		cmd.ExtraFiles, sound = append(cmd.ExtraFiles, ar), aw
		defer ar.Close()
		defer aw.Close()
	}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		progR.Close()
		progW.Close()
		o.fail(FFmpegStartFailed, 0, fmt.Errorf("ffmpeg output: starting %s: %w", o.cfg.Bin, err))
		return 0, false
	}
	pr.Close()
	progW.Close()
	progressDone := make(chan struct{})
	go o.readProgress(progR, progressDone)
	var soundBuf []byte
	start := time.Now()
	pid := cmd.Process.Pid
	o.mu.Lock()
	o.stats.Running, o.stats.PID, o.cmd = true, pid, cmd
	restarts := o.stats.Restarts
	o.mu.Unlock()
	o.event(FFmpegEvent{Kind: FFmpegStarted, PID: pid, Restarts: restarts})

	exited, gone := make(chan error, 1), make(chan struct{})
	go func() {
		err := cmd.Wait()
		<-progressDone // its last report is counted before anyone hears of the exit
		exited <- err
		close(gone)
	}()
	finish := func(kind FFmpegEventKind, err error) {
		o.mu.Lock()
		o.stats.Running, o.stats.PID, o.cmd, o.stats.Delivering = false, 0, nil, false
		o.mu.Unlock()
		if err != nil {
			o.fail(kind, pid, err)
		}
	}
	// A panic feeding the process (a broken frame) ends it as an exit
	// does: killed and reaped, reported, and started again after the
	// backoff.
	defer func() {
		if p := recover(); p != nil {
			err := panics.From(fmt.Sprintf("feeding ffmpeg process %d", pid), p, nil)
			pw.Close()
			cmd.Process.Kill()
			<-gone
			o.countExit(false)
			finish(FFmpegExited, err)
			ran, closed = time.Since(start), false
		}
	}()
	describe := func(werr error) error {
		msg := stderr.String()
		if msg != "" {
			return fmt.Errorf("ffmpeg output: process %d %v: %s", pid, werr, lastLines(msg, 3))
		}
		return fmt.Errorf("ffmpeg output: process %d %v", pid, werr)
	}
	for {
		f, closing := o.pop()
		if f == nil {
			if closing {
				// Clean stop: close the pipes so ffmpeg ends its file.
				pw.Close()
				if sound != nil {
					sound.Close()
				}
				select {
				case <-exited:
				case <-time.After(10 * time.Second):
					cmd.Process.Kill()
					<-exited
				}
				finish(FFmpegExited, nil)
				return time.Since(start), true
			}
			select {
			case <-o.wake:
				continue
			case werr := <-exited:
				pw.Close()
				if werr == nil {
					werr = errors.New("exited before the output was closed")
				}
				o.countExit(false)
				finish(FFmpegExited, describe(werr))
				return time.Since(start), false
			}
		}
		pw.SetWriteDeadline(time.Now().Add(o.cfg.StallTimeout))
		_, err := f.WriteTo(pw)
		if err == nil && sound != nil && f.Audio != nil {
			sound.SetWriteDeadline(time.Now().Add(o.cfg.StallTimeout))
			soundBuf = audio.AppendF32LE(soundBuf[:0], f.Audio)
			_, err = sound.Write(soundBuf)
		}
		f.Release()
		if err != nil {
			pw.Close()
			if errors.Is(err, os.ErrDeadlineExceeded) {
				cmd.Process.Kill()
				<-exited
				o.countExit(true)
				finish(FFmpegStalled, fmt.Errorf("ffmpeg output: process %d stalled: a frame waited %v for the pipe; killed", pid, o.cfg.StallTimeout))
				return time.Since(start), false
			}
			werr := <-exited
			if werr == nil {
				werr = fmt.Errorf("closed its input (%v)", err)
			}
			o.countExit(false)
			finish(FFmpegExited, describe(werr))
			return time.Since(start), false
		}
		o.mu.Lock()
		o.stats.Written++
		o.mu.Unlock()
	}
}

// readProgress reads one process's -progress reports until it exits,
// keeping its frames and bytes out and its speed in the stats (each
// report's values are the process's totals so far).
func (o *FFmpeg) readProgress(r *os.File, done chan<- struct{}) {
	defer close(done)
	defer r.Close()
	o.mu.Lock()
	baseFrames, baseBytes := o.stats.Encoded, o.stats.Bytes
	o.mu.Unlock()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		o.mu.Lock()
		switch key {
		case "frame":
			if n, err := strconv.ParseInt(val, 10, 64); err == nil {
				o.stats.Encoded = baseFrames + n
			}
		case "total_size":
			if n, err := strconv.ParseInt(val, 10, 64); err == nil {
				o.stats.Bytes = baseBytes + n
				if n > 0 && !o.stats.Delivering {
					o.stats.Delivering = true
					if o.stats.down {
						o.stats.down = false
						o.stats.Reconnects++
					}
				}
			}
		case "speed":
			if x, err := strconv.ParseFloat(strings.TrimSuffix(val, "x"), 64); err == nil {
				o.stats.Speed = x
			}
		}
		o.mu.Unlock()
	}
}

// nextTimecode waits for a frame in the queue and returns its timecode;
// false when the output closes with none.
func (o *FFmpeg) nextTimecode() (string, bool) {
	for {
		o.mu.Lock()
		if o.n > 0 {
			tc := o.queue[o.head].Timecode.String()
			o.mu.Unlock()
			return tc, true
		}
		closing := o.closing
		o.mu.Unlock()
		if closing {
			return "", false
		}
		select {
		case <-o.wake:
		case <-o.stop:
		}
	}
}

func (o *FFmpeg) countExit(stall bool) {
	o.mu.Lock()
	o.stats.Exits++
	if stall {
		o.stats.Stalls++
	}
	o.mu.Unlock()
}

func (o *FFmpeg) fail(kind FFmpegEventKind, pid int, err error) {
	o.mu.Lock()
	o.stats.LastError, o.stats.down = err.Error(), true
	restarts := o.stats.Restarts
	o.mu.Unlock()
	o.event(FFmpegEvent{Kind: kind, PID: pid, Restarts: restarts, Err: err})
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

// Close stops taking frames, writes what is queued to a running process,
// closes its input so it can finish its file, and waits for it (killing it
// after 10 s). Failures along the way were reported through OnEvent and
// Stats; Close itself returns nil. Closing twice waits for the first.
func (o *FFmpeg) Close() error {
	o.mu.Lock()
	if o.closing {
		o.mu.Unlock()
		<-o.done
		return nil
	}
	o.closing = true
	o.mu.Unlock()
	close(o.stop)
	select {
	case o.wake <- struct{}{}:
	default:
	}
	<-o.done
	o.mu.Lock()
	o.stats.closed = true
	o.mu.Unlock()
	return nil
}
