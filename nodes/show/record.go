package show

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media"
)

// How long a record output waits before it opens its file again after a
// write failed: the first wait, doubled after every failure up to the last.
const (
	recordRetryFirst = 250 * time.Millisecond
	recordRetryMax   = 8 * time.Second
)

// errDropped is what an output's write returns for a frame it could not
// write but carries on after (it has reported why): the sink counts a drop
// and the node does not fail.
var errDropped = errors.New("frame dropped")

// recorder is a record output's file for the whole run, kept in its
// OutputState across node restarts. It never destroys what it wrote:
//
//   - The first open of a run starts the file (truncating what an earlier
//     run left there); every later open continues it: Y4M is one header and
//     frames of a fixed size, so the file is continued after its last whole
//     frame (a partial frame after it is cut off) rather than split into
//     numbered segments. The recording stays one file that plays from start
//     to end, and no segment is ever left half-written.
//   - A frame that cannot be written (a full disk) is counted as a drop; the
//     file is closed, and opened again after a wait that doubles from 250 ms
//     to 8 s while writing keeps failing. Frames that arrive meanwhile are
//     drops too. Every open after a failure counts as a restart.
//   - A frame counts as written once the whole of it is in the file, so the
//     summary's frames are what the file holds; if the file holds another
//     count when it is opened again (someone cut it), the file's count wins
//     and the difference is logged.
type recorder struct {
	path   string
	format frame.Format
	width  int
	height int
	rate   frame.Rational
	rng    string // the show's colour range, tagged in the header
	st     *OutputState
	open   media.OpenFunc
	now    func() time.Time

	log     *slog.Logger // the current node's; replaced on a restart
	rec     *media.Record
	opened  bool          // the file was started in this run
	wait    time.Duration // the wait after the last failure; 0 while writing
	retryAt time.Time

	// The bus's sound, in a WAV file beside the video (wavPath): each
	// tick's block written with its frame, so the two stay sample-aligned
	// (a frame dropped from the video drops its block too). A WAV that
	// cannot be written is logged and left as it is; the video goes on.
	wavPath string
	wavFile *os.File
	wav     *audio.WAVWriter
}

// WAVPath is where a record output to path writes its sound: the same
// name with .wav for its extension.
func WAVPath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".wav"
}

// openWAV starts the WAV on the run's first open and continues it after.
func (r *recorder) openWAV(continued bool) {
	flags := os.O_RDWR | os.O_CREATE | os.O_TRUNC
	if continued {
		flags = os.O_RDWR
	}
	f, err := os.OpenFile(r.wavPath, flags, 0o644)
	if err == nil {
		if continued {
			r.wav, err = audio.ContinueWAVWriter(f)
		} else {
			r.wav, err = audio.NewWAVWriter(f)
		}
	}
	if err != nil {
		r.log.Error("record output cannot write its sound; the video goes on", "path", r.wavPath, "error", err)
		if f != nil {
			f.Close()
		}
		r.wav = nil
		return
	}
	r.wavFile = f
}

func (r *recorder) writeWAV(f *frame.Frame) {
	if r.wav == nil || f.Audio == nil {
		return
	}
	if err := r.wav.Write(f.Audio); err != nil {
		r.log.Error("record output cannot write its sound; the video goes on", "path", r.wavPath, "error", err)
		r.closeWAV()
	}
}

func (r *recorder) closeWAV() error {
	if r.wav == nil {
		return nil
	}
	err := r.wav.Close()
	if cerr := r.wavFile.Close(); err == nil {
		err = cerr
	}
	r.wav, r.wavFile = nil, nil
	return err
}

// start opens the file for a (re)started node: it starts the file on the
// run's first open and continues it afterwards. A continued file that
// cannot be opened is not fatal: the recorder waits and tries again.
func (r *recorder) start(log *slog.Logger) error {
	r.log = log
	if r.opened {
		if r.wav == nil && r.wavPath != "" {
			r.openWAV(true)
		}
		if r.rec == nil && !r.now().Before(r.retryAt) {
			r.reopen()
		}
		return nil
	}
	rec, err := media.OpenRecord(r.path, r.format, r.width, r.height, r.rate, media.RecordOptions{Open: r.open, Range: r.rng})
	if err != nil {
		return err
	}
	r.rec, r.opened = rec, true
	r.st.Written.Store(0)
	if r.wavPath != "" {
		r.openWAV(false)
	}
	return nil
}

// write writes one frame, or drops it while the file cannot be written.
func (r *recorder) write(f *frame.Frame) error {
	if r.rec == nil {
		if r.now().Before(r.retryAt) {
			return errDropped
		}
		if !r.reopen() {
			return errDropped
		}
	}
	if err := r.rec.Write(f); err != nil {
		r.failed(err)
		return errDropped
	}
	r.writeWAV(f)
	r.wait = 0
	return nil
}

// reopen opens the file again after a failure, continuing it; it counts a
// restart.
func (r *recorder) reopen() bool {
	r.st.mu.Lock()
	r.st.restart++
	r.st.mu.Unlock()
	rec, err := media.OpenRecord(r.path, r.format, r.width, r.height, r.rate, media.RecordOptions{Continue: true, Open: r.open, Range: r.rng})
	if err != nil {
		r.failed(err)
		return false
	}
	r.rec = rec
	if cut := rec.Cut(); cut > 0 {
		r.log.Warn("record output cut a partial frame off the end of its file", "path", r.path, "bytes", cut)
	}
	if got, counted := uint64(rec.Frames()), r.st.Written.Load(); got != counted {
		r.log.Warn("record output's file holds another number of frames than it counted; counting the file's", "path", r.path, "file", got, "counted", counted)
		r.st.Written.Store(got)
	}
	r.log.Info("record output writes again, continuing its file", "path", r.path, "frames", rec.Frames())
	return true
}

// failed closes the file and waits before the next open.
func (r *recorder) failed(err error) {
	if r.rec != nil {
		r.rec.Close() // nothing is buffered: what was written stays
		r.rec = nil
	}
	r.wait = min(max(2*r.wait, recordRetryFirst), recordRetryMax)
	r.retryAt = r.now().Add(r.wait)
	what := "keeps what it wrote"
	if errors.Is(err, syscall.ENOSPC) {
		what = "the disk is full: free space on it; the output keeps what it wrote"
	}
	err = fmt.Errorf("%w (%s, drops frames and continues the file in %v)", err, what, r.wait)
	r.st.fail(err)
	r.log.Error("record output cannot write", "error", err)
}

// close closes the file when the node stops.
func (r *recorder) close() error {
	werr := r.closeWAV()
	if r.rec == nil {
		return werr
	}
	err := r.rec.Close()
	r.rec = nil
	if err == nil {
		err = werr
	}
	return err
}
