package show

import (
	"sync/atomic"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/runtime"
)

// A picture that makes the snapshot encoder panic (its luma plane shorter
// than its rows) costs that snapshot only: the frame is let go, the panic
// counted, and the next picture's snapshot is taken.
func TestASnapshotThatPanicsCostsThatSnapshotOnly(t *testing.T) {
	sl := &snapSlot{name: "bus.pgm"}
	s := &snapshots{clock: runtime.Now, owner: map[string]string{},
		work: make(chan snapJob, 8), stop: make(chan struct{}), done: make(chan struct{})}
	s.slots.Store(&map[string]*snapSlot{sl.name: sl})
	s.start.Do(func() { go s.run() })
	defer s.close()
	var released, done atomic.Int32
	job := func(f *frame.Frame) snapJob {
		return snapJob{slot: sl, host: func() (*frame.Frame, func(), error) { return f, func() { done.Add(1) }, nil }, release: func() { released.Add(1) }}
	}
	broken, _ := frame.New(frame.NV12, 640, 360)
	broken.Data[0] = broken.Data[0][:640]
	before := panics.Recovered()
	sl.busy.Store(true)
	s.send(job(broken))
	testwait.Until(t, testwait.Bound, "the broken picture's job to end", func() bool { return released.Load() == 1 && !sl.busy.Load() })
	sl.mu.Lock()
	kept := len(sl.jpeg)
	sl.mu.Unlock()
	if n := panics.Recovered() - before; n != 1 || done.Load() != 1 || kept != 0 {
		t.Fatalf("%d panics counted, host copy given back %d times, snapshot %d bytes", n, done.Load(), kept)
	}
	good, _ := frame.New(frame.NV12, 640, 360)
	sl.busy.Store(true)
	s.send(job(good))
	testwait.Until(t, testwait.Bound, "the next picture's snapshot", func() bool {
		sl.mu.Lock()
		defer sl.mu.Unlock()
		return len(sl.jpeg) > 0
	})
}
