package media

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/nodes/media/es"
)

// LiveAudio decodes the sound of a live transport stream on the pictures'
// clock. Tap gives the reader the pictures' decoder reads; every byte read
// through it is queued (never waited on) for an ffmpeg process of its own,
// started by Start once the pictures' decoder has found where the pictures
// start. That ffmpeg keeps the stream's timestamps (-copyts) and pads or
// trims the sound so that its first sample is the first picture's
// (aresample's first_pts: the picture's PTS at 48 kHz), and fills a gap in
// the sound with silence, so sample frame p of what it writes is p/48000
// s after the first picture. Frame k of the connection (counted from 0)
// then carries the sample frames from Cadence.Start(k): Ready says whether
// they have come, Take takes them.
//
// The pictures never wait on the sound: bytes the sound's ffmpeg has not
// taken beyond LiveAudioQueue are dropped (counted in Dropped), and a
// frame whose samples have not come when the caller gives up waiting gets
// silence for them.
type LiveAudio struct {
	name string
	cad  audio.Cadence
	why  NoSound // the tapped reader, when it says why its stream is silent

	mu      sync.Mutex
	wake    *sync.Cond
	queue   [][]byte // tapped bytes not yet written to ffmpeg
	queued  int
	dropped int64
	ended   bool // the tapped reader ended
	started bool
	closed  bool
	stdin   io.WriteCloser
	cmd     *exec.Cmd
	stderr  *lockedBuffer
	pcm     []float32 // decoded interleaved sample frames from position base on
	base    int64
	done    bool // ffmpeg's output has ended (or it never started)
	err     error
	// timedOut ends waitEnd's wait.
	timedOut bool
}

// LiveAudioQueue bounds the bytes of a live stream waiting for the sound's
// ffmpeg (those before the pictures start included): about 10 s of a
// 10 Mb/s stream.
const LiveAudioQueue = 12 << 20

// liveAudioKeep bounds the decoded sample frames waiting to be taken
// (10 s): a consumer that stopped taking them loses the oldest.
const liveAudioKeep = 10 * audio.Rate

// NoSound is a live stream that knows why it carries no sound (an RTMP
// publisher's in a codec that is not remuxed): NoSound says why, nil while
// it carries its sound or when its sender sends none.
type NoSound interface{ NoSound() error }

// TapAudio returns the stream's LiveAudio and the reader to decode the
// pictures from (it reads r). name says where the stream comes from, in
// errors. When r is a NoSound, the LiveAudio's Err says what it says.
func TapAudio(r io.Reader, name string, cad audio.Cadence) (*LiveAudio, io.Reader) {
	a := &LiveAudio{name: name, cad: cad, stderr: &lockedBuffer{}}
	a.why, _ = r.(NoSound)
	a.wake = sync.NewCond(&a.mu)
	return a, tapReader{r, a}
}

type tapReader struct {
	r io.Reader
	a *LiveAudio
}

func (t tapReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.a.add(p[:n], err != nil)
	return n, err
}

// add queues a copy of b for ffmpeg; end marks the stream's end.
func (a *LiveAudio) add(b []byte, end bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || a.ended || a.done {
		return
	}
	if len(b) > 0 {
		a.queue = append(a.queue, append([]byte(nil), b...))
		a.queued += len(b)
		for a.queued > LiveAudioQueue && len(a.queue) > 1 {
			a.queued -= len(a.queue[0])
			a.dropped += int64(len(a.queue[0]))
			a.queue = a.queue[1:]
		}
	}
	a.ended = a.ended || end
	a.wake.Broadcast()
}

// Dropped is how many bytes of the stream the sound's ffmpeg did not take
// in time and were left out.
func (a *LiveAudio) Dropped() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dropped
}

// Start starts decoding the sound, from where the pictures start (the
// pictures' decoder's Start). A stream whose program map lists no sound
// is silent: nothing is started. bin is the ffmpeg binary ("" is ffmpeg
// on $PATH).
func (a *LiveAudio) Start(bin string, at es.Start) error {
	if !at.Audio {
		a.finish(nil)
		return nil
	}
	if bin == "" {
		bin = "ffmpeg"
	}
	// No probing ahead (ffmpeg's default reads 5 s of the stream before
	// its first sample: the pictures would not wait that long).
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-copyts", "-probesize", "32", "-analyzeduration", "0", "-f", "mpegts", "-i", "pipe:0",
		"-map", "0:a:0", "-vn", "-ac", strconv.Itoa(audio.Channels), "-f", "f32le"}
	// Resampled to 48 kHz first, so that first_pts counts 48 kHz samples.
	filter := "aresample=" + strconv.Itoa(audio.Rate) + ",aresample=async=1"
	if at.HasPTS {
		filter += ":first_pts=" + strconv.FormatInt(at.PTS*audio.Rate/90000, 10)
	}
	cmd := exec.Command(bin, append(args[:len(args):len(args)], "-af", filter, "pipe:1")...)
	cmd.Stderr = a.stderr
	in, err1 := cmd.StdinPipe()
	out, err2 := cmd.StdoutPipe()
	if err := errors.Join(err1, err2); err != nil {
		a.finish(err)
		return err
	}
	if err := cmd.Start(); err != nil {
		err = fmt.Errorf("starting ffmpeg to decode %s's sound: %w", a.name, err)
		a.finish(err)
		return err
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		cmd.Process.Kill()
		cmd.Wait()
		return nil
	}
	a.cmd, a.stdin, a.started = cmd, in, true
	a.mu.Unlock()
	go a.feed(in)
	go a.read(bufio.NewReaderSize(out, 64<<10))
	return nil
}

// feed writes the queued bytes to ffmpeg, and closes its input at the
// stream's end.
func (a *LiveAudio) feed(in io.WriteCloser) {
	defer in.Close()
	for {
		a.mu.Lock()
		for len(a.queue) == 0 && !a.ended && !a.closed && !a.done {
			a.wake.Wait()
		}
		if a.closed || a.done || len(a.queue) == 0 {
			a.mu.Unlock()
			return
		}
		b := a.queue[0]
		a.queue = a.queue[1:]
		a.queued -= len(b)
		a.mu.Unlock()
		if _, err := in.Write(b); err != nil {
			return // ffmpeg ended: read says why
		}
	}
}

// read takes ffmpeg's samples until its output ends.
func (a *LiveAudio) read(out *bufio.Reader) {
	const frameBytes = audio.Channels * 4
	buf := make([]byte, 480*frameBytes) // 10 ms
	var carry int
	for {
		n, err := out.Read(buf[carry:])
		n += carry
		whole := n - n%frameBytes
		a.mu.Lock()
		for i := 0; i < whole; i += 4 {
			a.pcm = append(a.pcm, math.Float32frombits(binary.LittleEndian.Uint32(buf[i:])))
		}
		if over := len(a.pcm)/audio.Channels - liveAudioKeep; over > 0 {
			a.pcm = append(a.pcm[:0], a.pcm[over*audio.Channels:]...)
			a.base += int64(over)
		}
		a.wake.Broadcast()
		a.mu.Unlock()
		carry = copy(buf, buf[whole:n])
		if err != nil {
			break
		}
	}
	werr := a.cmd.Wait()
	a.mu.Lock()
	closed := a.closed
	a.mu.Unlock()
	if werr != nil && !closed {
		msg := strings.TrimSpace(string(a.stderr.Bytes()))
		if strings.Contains(msg, "matches no streams") {
			a.finish(nil) // what looked like sound in the program map is not
			return
		}
		a.finish(fmt.Errorf("ffmpeg decoding %s's sound: %v: %s (the pictures go on without it; onair decodes AAC, MP2, AC-3 and Opus)", a.name, werr, msg))
		return
	}
	a.finish(nil)
}

func (a *LiveAudio) finish(err error) {
	a.mu.Lock()
	a.done, a.err = true, err
	a.queue, a.queued = nil, 0
	a.wake.Broadcast()
	a.mu.Unlock()
}

// flushWait bounds the wait for a stream's last sound at its end (its
// decoder has the rest of the stream's bytes, and only decodes them).
const flushWait = 5 * time.Second

// waitEnd waits, once the tapped stream has ended, for the sound's decoder
// to end, for d at most.
func (a *LiveAudio) waitEnd(d time.Duration) {
	a.mu.Lock()
	a.timedOut = false
	a.mu.Unlock()
	timer := time.AfterFunc(d, func() {
		a.mu.Lock()
		a.timedOut = true
		a.wake.Broadcast()
		a.mu.Unlock()
	})
	defer timer.Stop()
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.ended && !a.done && !a.closed && !a.timedOut {
		a.wake.Wait()
	}
}

// Err is why the sound could not be decoded, once its decoder has ended,
// or why the stream carries none, when it says (NoSound); nil for a
// stream without sound, or one that ended well.
func (a *LiveAudio) Err() error {
	a.mu.Lock()
	err := a.err
	a.mu.Unlock()
	if err == nil && a.why != nil {
		err = a.why.NoSound()
	}
	return err
}

// Ready says whether frame k's samples have come, or never will (the
// sound has ended, or the stream has none).
func (a *LiveAudio) Ready(k int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.done || a.base+int64(len(a.pcm)/audio.Channels) >= a.cad.Start(k)+int64(a.cad.Samples(k))
}

// Take returns frame k's samples (a new slice, interleaved stereo), with
// silence for those that have not come, and lets go of every sample up to
// its end. It returns nil for a stream without sound.
func (a *LiveAudio) Take(k int64) []float32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started {
		return nil
	}
	from, n := a.cad.Start(k), int64(a.cad.Samples(k))
	b := make([]float32, n*audio.Channels)
	have := a.base + int64(len(a.pcm)/audio.Channels)
	if lo, hi := max(from, a.base), min(from+n, have); hi > lo {
		copy(b[(lo-from)*audio.Channels:], a.pcm[(lo-a.base)*audio.Channels:(hi-a.base)*audio.Channels])
	}
	if drop := min(from+n, have) - a.base; drop > 0 {
		a.pcm = append(a.pcm[:0], a.pcm[drop*audio.Channels:]...)
		a.base += drop
	}
	return b
}

// Close ends the sound's ffmpeg, if it runs.
func (a *LiveAudio) Close() {
	a.mu.Lock()
	a.closed = true
	a.queue, a.queued = nil, 0
	cmd := a.cmd
	a.wake.Broadcast()
	a.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		cmd.Process.Kill()
	}
}

// SoundQueue holds a live source's decoded pictures (of any backend's
// frame type) until their sound has come: Push adds the connection's next
// picture, Pop hands out the oldest with its samples once they have come,
// or once the queue holds lead pictures (the sound is that late: the
// picture goes on with silence where its samples are missing, and the
// sound keeps its place against the pictures). Flush hands out the rest
// with what there is, at the stream's end.
type SoundQueue[F any] struct {
	a    *LiveAudio
	lead int
	q    []F
	head int64 // the connection's frame number of q[0]
}

// SoundLead is how late a live stream's sound may come after its pictures
// before they go on without it: an encoder's transport stream muxer sends
// a PES packet of sound once it has gathered about 200 ms of it, and its
// decoder adds a frame or two.
const SoundLead = 500 * time.Millisecond

// NewSoundQueue holds pictures of the frame period given for a's sound,
// SoundLead's worth at most.
func NewSoundQueue[F any](a *LiveAudio, period time.Duration) *SoundQueue[F] {
	return &SoundQueue[F]{a: a, lead: max(int(SoundLead/max(period, 1)), 1)}
}

// Push adds the next picture.
func (q *SoundQueue[F]) Push(f F) { q.q = append(q.q, f) }

// Pop returns the oldest picture and its samples, if it may go on.
func (q *SoundQueue[F]) Pop() (F, []float32, bool) {
	var zero F
	if len(q.q) == 0 || len(q.q) < q.lead && !q.a.Ready(q.head) {
		return zero, nil, false
	}
	return q.take()
}

// Flush returns the pictures left, oldest first, each with its samples:
// when the stream has ended, once its sound's decoder has decoded the
// rest (within flushWait).
func (q *SoundQueue[F]) Flush(each func(F, []float32)) {
	if len(q.q) > 0 {
		q.a.waitEnd(flushWait)
	}
	for len(q.q) > 0 {
		f, b, _ := q.take()
		each(f, b)
	}
}

func (q *SoundQueue[F]) take() (F, []float32, bool) {
	var zero F
	f := q.q[0]
	q.q[0] = zero
	q.q = q.q[1:]
	b := q.a.Take(q.head)
	q.head++
	return f, b, true
}
