package ipc

import (
	"testing"
	"time"
)

// One poller serves several receivers on one thread: each receiver's
// frames reach its own deliver and its buffers go back to its producer;
// closing one receiver leaves the others served; closing the poller
// shuts the rest down, and no descriptor is left open.
func TestPollerServesSeveralReceivers(t *testing.T) {
	before := openFds(t)
	p, err := NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- p.Run() }()
	type served struct {
		r      *Receiver
		frames chan *Frame
		path   string
	}
	var rs [3]served
	for i := range rs {
		rs[i].path = socketPath(t)
		rs[i].frames = make(chan *Frame, 16)
		r, err := Listen(ReceiverConfig{Path: rs[i].path, ReturnQueue: 0, RetireWait: wait})
		if err != nil {
			t.Fatal(err)
		}
		rs[i].r = r
		frames := rs[i].frames
		if err := p.Serve(r, func(f *Frame) { frames <- f }); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Serve(rs[0].r, func(*Frame) {}); err == nil {
		t.Error("a receiver was served twice")
	}
	var prods [3]*Producer
	var rels [3]*releases
	for i := range rs {
		rels[i] = newReleases()
		prods[i], err = Dial(ProducerConfig{Socket: rs[i].path, Picture: NewPicture(BGRA, AlphaPremultiplied, 16, 8), OnRelease: rels[i].add})
		if err != nil {
			t.Fatal(err)
		}
	}
	next := func(i int) *Frame {
		t.Helper()
		select {
		case f := <-rs[i].frames:
			return f
		case <-time.After(wait):
			t.Fatalf("receiver %d: no frame arrived", i)
			return nil
		}
	}
	for seq := uint64(1); seq <= 3; seq++ {
		for i := range rs {
			sendOne(t, prods[i], seq*10+uint64(i))
		}
		for i := range rs {
			f := next(i)
			if f.Sequence != seq*10+uint64(i) {
				t.Errorf("receiver %d got frame %d, its producer sent %d", i, f.Sequence, seq*10+uint64(i))
			}
			f.Release()
		}
	}
	for i := range rs {
		rels[i].waitN(t, 3) // one buffer back per frame (return_queue 0)
	}
	// The first receiver goes; the others are still served.
	rs[0].r.Close()
	sendOne(t, prods[1], 99)
	if f := next(1); f.Sequence != 99 {
		t.Errorf("after another receiver closed: frame %d, want 99", f.Sequence)
	} else {
		f.Release()
	}
	p.Close()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		rs[i].r.Close() // closed already by the poller: returns at once
		prods[i].Close()
	}
	if after := openFds(t); after != before {
		t.Errorf("%d descriptors open before, %d after", before, after)
	}
}

// BenchmarkPollerFrame: one frame through a poller that serves 40
// receivers (the seeds' browser sources), from Send to deliver and back:
// what the shared thread costs a frame, and what it allocates (a poll
// round must not copy every receiver's state onto the heap).
func BenchmarkPollerFrame(b *testing.B) {
	p, err := NewPoller()
	if err != nil {
		b.Fatal(err)
	}
	go p.Run()
	defer p.Close()
	frames := make(chan *Frame, 64)
	var first *Receiver
	paths := make([]string, 40)
	for i := range paths {
		paths[i] = socketPath(b)
		r, err := Listen(ReceiverConfig{Path: paths[i], ReturnQueue: 0, RetireWait: wait})
		if err != nil {
			b.Fatal(err)
		}
		if first == nil {
			first = r
		}
		if err := p.Serve(r, func(f *Frame) { frames <- f }); err != nil {
			b.Fatal(err)
		}
	}
	// Every receiver has its producer connected, as on air; one sends.
	var prod *Producer
	for i, path := range paths {
		q, err := Dial(ProducerConfig{Socket: path, Picture: NewPicture(BGRA, AlphaPremultiplied, 16, 8)})
		if err != nil {
			b.Fatal(err)
		}
		defer q.Abort()
		if i == 0 {
			prod = q
		}
	}
	// One bound for every frame, reset each time: a timer made per frame
	// would be counted among the poller's allocations.
	bound := time.NewTimer(wait)
	defer bound.Stop()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf, err := prod.Acquire(wait)
		if err != nil {
			b.Fatal(err)
		}
		if err := prod.Send(buf, uint64(i+1), int64(i)); err != nil {
			b.Fatal(err)
		}
		bound.Reset(wait)
		select {
		case f := <-frames:
			f.Release()
		case <-bound.C:
			b.Fatalf("frame %d did not arrive", i)
		}
	}
}
