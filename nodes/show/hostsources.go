package show

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

// hostFrame converts a host frame to the backend's frame type, and reports
// whether the backend's edges carry host frames at all (the CPU's are host
// frames; the CUDA backend's carry host frames up to an upload).
func hostFrame[F Frame](f *frame.Frame) (F, bool) {
	v, ok := any(f).(F)
	return v, ok
}

func host[F Frame](f *frame.Frame) F {
	v, _ := hostFrame[F](f)
	return v
}

// testPattern draws frames on a thread of its own (as the registry places
// it), blocking on its output edge, or, placed on a loop, whenever the
// edge has room (its Consumed signal wakes it); either way it never runs
// ahead of the pacer by more than the edge holds.
type testPattern[F Frame] struct {
	st      *SourceState
	tp      *media.TestPattern
	pool    *frame.Pool
	pending *frame.Frame
}

func newTestPattern[F Frame](b *State, n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	if _, ok := hostFrame[F](nil); !ok {
		return nil, fmt.Errorf("node %s: test_pattern draws in host memory, and this backend's edges do not carry host frames", n.ID)
	}
	cfg, err := PatternConfig(b, &n)
	if err != nil {
		return nil, err
	}
	tp, err := media.NewTestPattern(cfg)
	if err != nil {
		return nil, err
	}
	pool, err := frame.NewPool(cfg.Format, cfg.Width, cfg.Height, 0)
	if err != nil {
		return nil, err
	}
	if len(ctx.Outputs) != 1 {
		return nil, fmt.Errorf("node %s: a test pattern has one output, the plan gives it %d", n.ID, len(ctx.Outputs))
	}
	return &testPattern[F]{st: b.Source(n.Address), tp: tp, pool: pool}, nil
}

// PatternConfig is the test pattern a node of a test pattern's kind
// (test_pattern, the CUDA backend's test_pattern_cuda) makes: its params,
// the picture the show gives its source, the stamp's id.
func PatternConfig(b *State, n *plan.Node) (media.TestPatternConfig, error) {
	f, w, h, rate, err := b.Video(n)
	if err != nil {
		return media.TestPatternConfig{}, err
	}
	prm, err := Params[struct {
		Pattern  string       `param:"pattern"`
		Colour   frame.Colour `param:"colour"`
		ToneHz   int          `param:"tone_hz"`
		ToneDBFS int          `param:"tone_dbfs"`
	}](n)
	if err != nil {
		return media.TestPatternConfig{}, err
	}
	pat, err := media.ParsePattern(prm.Pattern)
	if err != nil {
		return media.TestPatternConfig{}, fmt.Errorf("node %s: %v", n.ID, err)
	}
	cfg := media.TestPatternConfig{
		ID: n.Address, StampID: b.StampID(n.Address), Pattern: pat, Format: f, Width: w, Height: h,
		Rate: rate, Colour: prm.Colour.Or(frame.BT709),
	}
	if prm.ToneHz > 0 {
		cad, err := audio.NewCadence(int64(rate.Num), int64(rate.Den))
		if err != nil {
			return media.TestPatternConfig{}, fmt.Errorf("node %s: %v", n.ID, err)
		}
		tone, err := audio.NewTone(float64(prm.ToneHz), float64(prm.ToneDBFS), cad)
		if err != nil {
			return media.TestPatternConfig{}, fmt.Errorf("node %s: %v", n.ID, err)
		}
		cfg.Tone = &tone
	}
	return cfg, nil
}

func (t *testPattern[F]) Start(ctx *runtime.NodeContext[F]) error {
	// Continue the numbering after a restart, so timestamps never go back.
	t.tp.SetNext(int64(t.st.Produced.Load()))
	if ctx.Loop() == nil {
		// On a thread of its own: draw, then wait for room on the edge.
		ctx.Go(func() error {
			for !ctx.Stopping() {
				f, err := t.pool.Get()
				if err != nil {
					return err
				}
				if err := t.tp.Next(f); err != nil {
					f.Release()
					return err
				}
				t.st.Produced.Add(1)
				t.st.Audio.Add(f.Audio)
				if ok, _ := ctx.Put(0, host[F](f)); !ok {
					f.Release()
				}
			}
			return nil
		})
		return nil
	}
	_, err := ctx.Watch(ctx.Outputs[0].Consumed(), func(r *runtime.Registration) {
		t.fill(ctx)
		r.Rearm()
	})
	if err != nil {
		return err
	}
	t.fill(ctx)
	return nil
}

func (t *testPattern[F]) fill(ctx *runtime.NodeContext[F]) {
	for !ctx.Stopping() {
		if t.pending == nil {
			f, err := t.pool.Get()
			if err != nil {
				ctx.Fail(err)
				return
			}
			if err := t.tp.Next(f); err != nil {
				f.Release()
				ctx.Fail(err)
				return
			}
			t.st.Produced.Add(1)
			t.st.Audio.Add(f.Audio)
			t.pending = f
		}
		ok, err := ctx.Put(0, host[F](t.pending))
		if errors.Is(err, runtime.ErrWouldBlock) {
			return // full: the Consumed watch calls again
		}
		if err != nil || !ok {
			t.pending.Release()
			t.pending = nil
			if err != nil {
				return
			}
			continue
		}
		t.pending = nil
	}
}

func (t *testPattern[F]) Stop() {
	if t.pending != nil {
		t.pending.Release()
		t.pending = nil
	}
}

// rawFile reads a raw NV12/P010 file (or a Y4M file) on a thread of its own and blocks on
// its output edge, which the pacer empties one frame per period. A file that
// is missing or breaks is reported (node status, the source's last error)
// and the source sends black frames while it tries the file again every
// second, so the buses keep their deadlines. Once a second it also looks at
// the path: a file deleted and created again there (another inode) is
// opened in place of the old one, and logged. A file rewritten in place
// (same inode, new size or time) the reader notices at its next pass.
type rawFile[F Frame] struct {
	st    *SourceState
	cfg   media.RawFileConfig
	pool  *frame.Pool
	rate  frame.Rational
	fb    *Fallback    // black or hold, and the retries
	last  *frame.Frame // the last good frame, kept for hold
	check time.Duration
}

// HostRawFile makes a node reading a raw file into host frames on a
// thread of its own: the CPU backend's raw_file_cpu, and the head (input_rec)
// of a GPU backend's hwupload and pinned chains. on_error is read where the
// kind declares it.
func HostRawFile[F Frame](b *State, n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	if _, ok := hostFrame[F](nil); !ok {
		return nil, fmt.Errorf("node %s: a raw file is read into host memory, and this backend's edges do not carry host frames", n.ID)
	}
	f, w, h, rate, err := b.Video(&n)
	if err != nil {
		return nil, err
	}
	prm, err := Params[struct {
		Path   string       `param:"path"`
		Loop   bool         `param:"loop"`
		Colour frame.Colour `param:"colour"`
	}](&n)
	if err != nil {
		return nil, err
	}
	onError := "black"
	if k, ok := nodes.Lookup(n.Kind); ok {
		if _, declared := k.Param("on_error"); declared {
			e, err := Params[struct {
				OnError string `param:"on_error"`
			}](&n)
			if err != nil {
				return nil, err
			}
			onError = e.OnError
		}
	}
	path := b.Resolve(prm.Path)
	if path == "" {
		return nil, fmt.Errorf("node %s: no path", n.ID)
	}
	pool, err := frame.NewPool(f, w, h, 0)
	if err != nil {
		return nil, err
	}
	return &rawFile[F]{
		st: b.Source(n.Address), pool: pool, rate: rate, check: time.Second, fb: NewFallback(b.Source(n.Address), onError, "its file is usable"),
		cfg: media.RawFileConfig{ID: n.Address, Path: path, Format: f, Width: w, Height: h, Rate: rate,
			Colour: prm.Colour.Or(frame.BT709), Loop: prm.Loop},
	}, nil
}

func (r *rawFile[F]) Start(ctx *runtime.NodeContext[F]) error {
	ctx.Go(func() error { return r.run(ctx) })
	return nil
}

// reader is what rawFile reads frames from: a raw file, or a Y4M file.
type reader interface {
	Next(dst *frame.Frame) error
	Stat() (os.FileInfo, error)
	Close() error
}

// open opens the source's file: a .y4m file through the Y4M reader (its
// header must agree with the source's format and size), anything else as
// raw frames back to back.
func (r *rawFile[F]) open() (reader, error) {
	if !strings.EqualFold(filepath.Ext(r.cfg.Path), ".y4m") {
		return media.OpenRawFile(r.cfg)
	}
	y, err := media.OpenY4M(r.cfg.Path, r.cfg.ID, r.cfg.Loop)
	if err != nil {
		return nil, err
	}
	if y.Format() != r.cfg.Format || y.Width() != r.cfg.Width || y.Height() != r.cfg.Height {
		y.Close()
		return nil, fmt.Errorf("y4m %s holds %v %dx%d frames, but the source declares %v %dx%d: set the source's format and size to match", r.cfg.Path, y.Format(), y.Width(), y.Height(), r.cfg.Format, r.cfg.Width, r.cfg.Height)
	}
	return y, nil
}

func (r *rawFile[F]) run(ctx *runtime.NodeContext[F]) error {
	var src reader
	defer func() {
		if src != nil {
			src.Close()
		}
	}()
	var nextCheck time.Time
	var opened os.FileInfo // the file src reads
	n := int64(r.st.Produced.Load())
	for !ctx.Stopping() {
		if src != nil && time.Now().After(nextCheck) {
			nextCheck = time.Now().Add(r.check)
			if now, err := os.Stat(r.cfg.Path); err == nil && opened != nil && !os.SameFile(now, opened) {
				ctx.Log.Info("media file replaced at its path; reading the new one", "path", r.cfg.Path, "size", now.Size(), "modified", now.ModTime())
				src.Close()
				src = nil
			}
		}
		if src == nil && r.fb.Due() {
			s, err := r.open()
			if err != nil {
				r.fb.Fail(ctx.Log, ctx.Stats, err)
			} else {
				src = s
				opened, _ = s.Stat()
				nextCheck = time.Now().Add(r.check)
				if r.fb.Recovered() {
					ctx.Log.Info("media file usable again", "path", r.cfg.Path)
				}
			}
		}
		f, err := r.pool.Get()
		if err != nil {
			return err
		}
		if src != nil {
			err = src.Next(f)
			if errors.Is(err, io.EOF) { // a file that does not loop has ended
				f.Release()
				ctx.Log.Info("raw file ended", "path", r.cfg.Path, "frames", n)
				ctx.Done().Wait(ctx.Stopping, -1)
				return nil
			}
			if err != nil {
				r.fb.Fail(ctx.Log, ctx.Stats, err)
				src.Close()
				src = nil
			}
		}
		switch {
		case (src == nil || err != nil) && r.fb.Hold && r.last != nil:
			f.CopyFrom(r.last) // the last good frame while the file is unusable
		case src == nil || err != nil:
			f.Fill() // black while the file is unusable
			f.Colour, f.Source = r.cfg.Colour, r.cfg.ID
		case r.fb.Hold:
			if r.last == nil {
				r.last, _ = frame.New(f.Format, f.Width, f.Height)
			}
			r.last.CopyFrom(f)
		}
		f.PTS, f.TimeBase, f.SourceFrame = n, r.rate.Inverse(), n
		n++
		r.st.Produced.Add(1)
		if ok, err := ctx.Put(0, host[F](f)); !ok {
			f.Release()
			if err != nil {
				return nil // stopping
			}
		}
	}
	return nil
}

func (r *rawFile[F]) Stop() {}
