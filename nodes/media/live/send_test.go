package live

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when slept on.
type fakeClock struct {
	now   time.Time
	slept []time.Duration
}

func (c *fakeClock) Sleep(d time.Duration) { c.now = c.now.Add(d); c.slept = append(c.slept, d) }
func (c *fakeClock) Now() time.Time        { return c.now }

// withPCR is a chunk of seven TS packets, the first carrying PCR base v.
func withPCR(v int64) []byte {
	c := make([]byte, chunk)
	for i := 0; i < 7; i++ {
		c[i*tsPacket] = 0x47
		c[i*tsPacket+3] = 0x10
	}
	p := c[:tsPacket]
	p[3] = 0x30          // adaptation field and payload
	p[4], p[5] = 7, 0x10 // PCR flag
	p[6], p[7], p[8], p[9], p[10] = byte(v>>25), byte(v>>17), byte(v>>9), byte(v>>1), byte(v<<7)
	return c
}

// TestPacerFollowsPCR: chunks go out when their PCR says, counted from
// the first; a PCR that goes back (a loop) starts the clock again there
// rather than waiting or rushing.
func TestPacerFollowsPCR(t *testing.T) {
	var in bytes.Buffer
	for _, v := range []int64{900000, 900000 + 45000, 900000 + 90000, 0, 9000} {
		in.Write(withPCR(v))
	}
	clk := &fakeClock{now: time.Unix(1000, 0)}
	p := &Pacer{Sleep: clk.Sleep, Now: clk.Now}
	var out bytes.Buffer
	if err := p.Send(&out, &in); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 5*chunk {
		t.Fatalf("sent %d bytes of %d", out.Len(), 5*chunk)
	}
	want := []time.Duration{500 * time.Millisecond, 500 * time.Millisecond, 100 * time.Millisecond}
	if len(clk.slept) != len(want) {
		t.Fatalf("slept %v, want %v", clk.slept, want)
	}
	for i := range want {
		if clk.slept[i] != want[i] {
			t.Fatalf("slept %v, want %v", clk.slept, want)
		}
	}
	if err := p.Send(io.Discard, bytes.NewReader([]byte("not a transport stream at all"))); err == nil {
		t.Error("no error for bytes that are no transport stream")
	}
}

// FuzzPacer: any bytes are sent or refused without a panic, and the pacer
// never sleeps more than a second for one chunk (a jump restarts its
// clock).
func FuzzPacer(f *testing.F) {
	f.Add(append(withPCR(0), withPCR(90000)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		clk := &fakeClock{now: time.Unix(0, 0)}
		p := &Pacer{Sleep: clk.Sleep, Now: clk.Now}
		p.Send(io.Discard, bytes.NewReader(b))
		for _, d := range clk.slept {
			if d > time.Second+time.Millisecond {
				t.Fatalf("slept %v for one chunk", d)
			}
		}
	})
}

// TestPacerSpeedDrifts: 60 s of a stream's clock (a PCR every 40 ms) sent
// at Speed 1.001 takes 0.1 % less time on the sender's clock, and at 0.999
// 0.1 % more: a sender 0.1 % fast or slow, 60 ms a minute either way.
func TestPacerSpeedDrifts(t *testing.T) {
	for _, c := range []struct {
		speed float64
		want  time.Duration
	}{{1, 60 * time.Second}, {1.001, 59940059940}, {0.999, 60060060060}} { // 60 s / speed, in ns
		var in bytes.Buffer
		for v := int64(0); v <= 60*90000; v += 3600 {
			in.Write(withPCR(v))
		}
		clk := &fakeClock{now: time.Unix(1000, 0)}
		p := &Pacer{Sleep: clk.Sleep, Now: clk.Now, Speed: c.speed}
		if err := p.Send(io.Discard, &in); err != nil {
			t.Fatal(err)
		}
		if got := clk.now.Sub(time.Unix(1000, 0)); got < c.want-time.Millisecond || got > c.want+time.Millisecond {
			t.Errorf("speed %v: 60 s of the stream sent in %v, want %v", c.speed, got, c.want)
		}
	}
}
