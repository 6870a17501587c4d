package show

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onairhq/onair/nodes/media"
)

// The as-run log: one JSON line per switch asked for and per switch drawn,
// per missed deadline, per source error and recovery, and per change made
// on air (Options.AsRun; `onair run -as-run FILE`). Each line says what
// happened, the tick and its timecode, the wall time and, for a switch,
// where it came from (page, cli, cue, api). The same lines go to the log
// at info level.
//
// The file is opened with O_APPEND before the show goes on air (a path
// that cannot be written refuses the show), and each line is one write(2)
// from the log's goroutine, which the show hands lines to without waiting
// (a tick never waits for the disk): a line reaches the kernel within
// microseconds of what it records, so onair crashing or being killed
// loses nothing written, and a reader never sees half a line of it. The
// file is fsynced once a second while lines arrive and when the show
// stops, so a power cut loses at most the last second. A write that fails
// (a full disk) loses that line, not the show: the loss is counted and
// the last error kept (/status as_run, /metrics onair_as_run_lines_lost_total),
// the part of the line that went in is cut off again, and later lines are
// written when there is room again.

// AsRunLine is one line of the as-run log.
type AsRunLine struct {
	Time     time.Time `json:"time"`  // wall time of what the line records
	Event    string    `json:"event"` // switch_asked, switch_drawn, missed_deadline, source_error, source_ok, live_change
	Bus      string    `json:"bus,omitempty"`
	Tick     *int64    `json:"tick,omitempty"` // the tick drawn on, asked for (or, without at, the next the bus was to draw), missed, or presented when it happened
	Timecode string    `json:"timecode,omitempty"`
	Scene    string    `json:"scene,omitempty"`
	// Transition and DurationMs are a switch's.
	Transition string `json:"transition,omitempty"`
	DurationMs *int64 `json:"duration_ms,omitempty"`
	// At is the timecode a switch was asked for (absent: the next tick).
	At string `json:"at,omitempty"`
	// Origin is where a switch or change came from: page, cli, cue, api,
	// apply.
	Origin   string   `json:"origin,omitempty"`
	Missed   uint64   `json:"missed,omitempty"` // missed_deadline: deadlines missed since the last line
	Source   string   `json:"source,omitempty"`
	Error    string   `json:"error,omitempty"`
	Elements []string `json:"elements,omitempty"` // live_change: what changed
}

// Origins of a switch or change, as the as-run log writes them.
const (
	OriginPage  = "page"
	OriginCLI   = "cli"
	OriginCue   = "cue"
	OriginAPI   = "api"
	OriginApply = "apply"
)

// asRunQueue is how many lines wait for the log's goroutine at most; more
// are lost and counted (a disk that slow is a disk the log cannot keep).
const asRunQueue = 4096

// AsRun writes the as-run log.
type AsRun struct {
	path      string
	f         media.RecordFile
	log       *slog.Logger
	everyLine bool // fsync after every line, not once a second

	in     chan AsRunLine
	done   chan struct{}
	once   sync.Once
	closeM sync.RWMutex // held to send on in, and to close it
	closed bool

	size  int64         // bytes of whole lines in the file (the log's goroutine's)
	lines atomic.Uint64 // written whole
	lost  atomic.Uint64 // not written: the queue was full, or the write failed
	mu    sync.Mutex
	err   string // the last write error
}

// AsRunFsyncs are the as-run log's fsync policies, "" being the first:
// once a second while lines come (a power cut loses at most the last
// second; a crash of onair loses nothing either way), or after every line
// (a power cut loses nothing written; a disk write per line).
var AsRunFsyncs = []string{"second", "line"}

// OpenAsRun opens path for appending (creating it), through open (nil:
// os.OpenFile), to be fsynced as fsync says (AsRunFsyncs). A path that is
// not a regular file, or cannot be opened for writing, is refused, saying
// what to do.
func OpenAsRun(path, fsync string, open media.OpenFunc, log *slog.Logger) (*AsRun, error) {
	if fsync != "" && !slices.Contains(AsRunFsyncs, fsync) {
		return nil, fmt.Errorf("as-run log: fsync %q: give one of %s", fsync, strings.Join(AsRunFsyncs, ", "))
	}
	if open == nil {
		open = media.OpenOSFile
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("as-run log %s is not a regular file (%s): give a file path, e.g. -as-run asrun.jsonl", path, fi.Mode().Type())
	}
	f, err := open(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		hint := "check the directory exists and is writable"
		if errors.Is(err, os.ErrNotExist) {
			hint = fmt.Sprintf("the directory %s does not exist: create it or give another path", filepath.Dir(path))
		} else if errors.Is(err, os.ErrPermission) {
			hint = "onair may not write there: give a path it can write, or change the permissions"
		}
		return nil, fmt.Errorf("as-run log: cannot open %s for appending: %v (%s)", path, err, hint)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("as-run log %s: %v", path, err)
	}
	a := &AsRun{path: path, f: f, log: log, size: fi.Size(), in: make(chan AsRunLine, asRunQueue), done: make(chan struct{}), everyLine: fsync == "line"}
	go a.run()
	return a, nil
}

// Record hands a line to the log without waiting; a nil AsRun records
// nothing.
func (a *AsRun) Record(l AsRunLine) {
	if a == nil {
		return
	}
	if l.Time.IsZero() {
		l.Time = time.Now()
	}
	a.closeM.RLock()
	defer a.closeM.RUnlock()
	if a.closed {
		a.lost.Add(1)
		return
	}
	select {
	case a.in <- l:
	default:
		a.lost.Add(1)
		a.setErr("the as-run queue was full: lines arrived faster than the disk took them")
	}
}

func (a *AsRun) setErr(s string) {
	a.mu.Lock()
	a.err = s
	a.mu.Unlock()
}

func (a *AsRun) run() {
	defer close(a.done)
	every := time.NewTicker(time.Second)
	defer every.Stop()
	dirty, failing := false, false
	var buf []byte
	for {
		select {
		case l, ok := <-a.in:
			if !ok {
				a.fsync()
				return
			}
			b, err := json.Marshal(l)
			if err != nil { // not with these field types; counted all the same
				a.lost.Add(1)
				a.setErr(err.Error())
				continue
			}
			buf = append(append(buf[:0], b...), '\n')
			// One write(2) a line, on a file opened O_APPEND: the line
			// lands whole after every line before it.
			if n, err := a.f.Write(buf); err != nil || n != len(buf) {
				a.lost.Add(1)
				if err == nil {
					err = fmt.Errorf("short write: %d of %d bytes", n, len(buf))
				}
				if n > 0 { // part of the line went in: take it out, so no reader sees half a line
					if terr := a.f.Truncate(a.size); terr != nil {
						err = fmt.Errorf("%v; and cutting off the part written: %v", err, terr)
					}
				}
				a.setErr(err.Error())
				if !failing { // once per failure, not per line: a full disk would flood the log
					a.log.Error("as-run log: lines are being lost; the show stays on air", "path", a.path, "error", err, "lost", a.lost.Load())
					failing = true
				}
			} else {
				if failing {
					a.log.Warn("as-run log: writing again", "path", a.path, "lost", a.lost.Load())
					failing = false
				}
				a.size += int64(n)
				a.lines.Add(1)
				dirty = true
				if a.everyLine {
					a.fsync()
					dirty = false
				}
			}
			a.log.Info("as-run", asRunAttrs(l)...)
		case <-every.C:
			if dirty {
				a.fsync()
				dirty = false
			}
		}
	}
}

func (a *AsRun) fsync() {
	if s, ok := a.f.(interface{ Sync() error }); ok {
		if err := s.Sync(); err != nil {
			a.setErr("fsync: " + err.Error())
		}
	}
}

// asRunAttrs are a line's fields as log attributes: the same names and
// values as its JSON.
func asRunAttrs(l AsRunLine) []any {
	var m map[string]any
	b, _ := json.Marshal(l)
	json.Unmarshal(b, &m)
	out := make([]any, 0, 2*len(m))
	for _, k := range asRunKeys {
		if v, ok := m[k]; ok && k != "time" {
			out = append(out, k, v)
		}
	}
	return out
}

var asRunKeys = []string{"event", "bus", "tick", "timecode", "scene", "transition", "duration_ms", "at", "origin", "missed", "source", "error", "elements"}

// Close writes what is queued, fsyncs and closes the file. Lines recorded
// after it are lost.
func (a *AsRun) Close() error {
	if a == nil {
		return nil
	}
	var err error
	a.once.Do(func() {
		a.closeM.Lock()
		a.closed = true
		close(a.in)
		a.closeM.Unlock()
		<-a.done
		err = a.f.Close()
	})
	return err
}

// AsRunStatus is the as-run log in /status.
type AsRunStatus struct {
	Path      string `json:"path"`
	Lines     uint64 `json:"lines"`
	Lost      uint64 `json:"lost"`
	LastError string `json:"last_error,omitempty"`
}

// Status is what the log has written and lost.
func (a *AsRun) Status() *AsRunStatus {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return &AsRunStatus{Path: a.path, Lines: a.lines.Load(), Lost: a.lost.Load(), LastError: a.err}
}

// switchAsked records a switch as it is asked for.
func (b *State) switchAsked(bs *BusState, c *CutRecord) {
	if b.asRun == nil {
		return
	}
	k := c.atTick // the tick asked for, or the next one the bus was to draw
	if k < 0 {
		k = c.next
	}
	d := c.duration.Milliseconds()
	b.asRun.Record(AsRunLine{Event: "switch_asked", Bus: bs.Address, Tick: &k, Timecode: b.TimecodeAt(k).String(), Scene: c.Scene,
		Transition: c.Kind, DurationMs: &d, At: c.At, Origin: c.Origin})
}

// switchDrawn records a switch as a tick shows it; bs.mu is held.
func (b *State) switchDrawn(bs *BusState, c *CutRecord) {
	c.Timecode = b.TimecodeAt(c.Tick).String()
	if b.asRun == nil {
		return
	}
	k := c.Tick
	d := c.duration.Milliseconds()
	b.asRun.Record(AsRunLine{Event: "switch_drawn", Bus: bs.Address, Tick: &k, Timecode: c.Timecode, Scene: c.Scene,
		Transition: c.Kind, DurationMs: &d, At: c.At, Origin: c.Origin})
}

// AsRun is the show's as-run log (nil: none).
func (b *State) AsRun() *AsRun { return b.asRun }

// CheckAsRun refuses an as-run path the show could not open (OpenAsRun),
// before anything starts; it creates the file if it is missing.
func CheckAsRun(path, fsync string) error {
	a, err := OpenAsRun(path, fsync, nil, nil)
	if err != nil {
		return err
	}
	return a.Close()
}
