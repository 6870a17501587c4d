package ipc

import (
	"errors"
	"testing"
	"time"

	"github.com/onairhq/onair/internal/panics"
)

// A panic serving one receiver on a poller (here its deliver's) shuts that
// receiver down and is reported to its owner; the poller's thread lives
// and serves the other receivers.
func TestPollerSurvivesAPanicServingOneReceiver(t *testing.T) {
	p, err := NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- p.Run() }()
	defer func() { p.Close(); <-ran }()
	failed := make(chan error, 1)
	badPath, goodPath := socketPath(t), socketPath(t)
	bad, err := Listen(ReceiverConfig{Path: badPath, RetireWait: wait, OnPanic: func(err error) { failed <- err }})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	good, err := Listen(ReceiverConfig{Path: goodPath, RetireWait: wait})
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	frames := make(chan *Frame, 16)
	if err := p.Serve(bad, func(f *Frame) { f.Release(); panic("a broken source") }); err != nil {
		t.Fatal(err)
	}
	if err := p.Serve(good, func(f *Frame) { frames <- f }); err != nil {
		t.Fatal(err)
	}
	dial := func(path string) *Producer {
		pr, err := Dial(ProducerConfig{Socket: path, Picture: NewPicture(BGRA, AlphaPremultiplied, 16, 8), OnRelease: newReleases().add})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pr.Close() })
		return pr
	}
	badProd, goodProd := dial(badPath), dial(goodPath)
	before := panics.Recovered()
	sendOne(t, badProd, 1)
	select {
	case err := <-failed:
		if pe := (*panics.Error)(nil); !errors.As(err, &pe) || pe.Value != "a broken source" {
			t.Fatalf("reported %v", err)
		}
	case <-time.After(wait):
		t.Fatal("the panic was not reported")
	}
	if n := panics.Recovered() - before; n != 1 {
		t.Errorf("%d panics counted", n)
	}
	sendOne(t, goodProd, 2)
	select {
	case f := <-frames:
		if f.Sequence != 2 {
			t.Errorf("the other receiver got frame %d, want 2", f.Sequence)
		}
		f.Release()
	case <-time.After(wait):
		t.Fatal("the other receiver got nothing after the panic")
	}
}
