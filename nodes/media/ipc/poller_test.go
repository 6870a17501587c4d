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
