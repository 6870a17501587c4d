package live

import (
	"bufio"
	"errors"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/internal/testwait"
)

// resources are what a process holds that a leak grows: descriptors,
// goroutines, the Go heap in use after a collection, and its resident
// memory (libsrt's allocations among it).
type resources struct{ fds, goroutines, heap, rss int }

func measure(t *testing.T) resources {
	t.Helper()
	runtime.GC()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd here: %v", err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r := resources{fds: len(fds), goroutines: runtime.NumGoroutine(), heap: int(ms.HeapAlloc)}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.Fields(v)[0])
			r.rss = kb << 10
		}
	}
	return r
}

// settled waits until the descriptors and goroutines are back to
// before, exactly (libsrt closes a socket's descriptor on its own thread,
// a second or so after srt_close; a goroutine ends after the call that
// ended it returned; trimLater's goroutine ends after its last trim),
// failing with the last reading once the bound has passed. It then gives
// the Go heap's free pages and malloc's back (debug.FreeOSMemory,
// mallocTrim) and returns the lowest of the readings over the next second:
// memory a loaded machine's threads free late (libsrt frees a closed
// socket on its own thread) is back by then, memory leaked never is.
func settled(t *testing.T, before resources, what string) resources {
	t.Helper()
	var now resources
	for deadline := time.Now().Add(testwait.Bound); ; time.Sleep(50 * time.Millisecond) {
		now = measure(t)
		if now.fds <= before.fds && now.goroutines <= before.goroutines {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: before %+v, a minute after %+v", what, before, now)
		}
	}
	for i := 0; i < 10; i++ {
		if i > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		debug.FreeOSMemory()
		mallocTrim()
		r := measure(t)
		if i == 0 || r.rss < now.rss {
			now.rss = r.rss
		}
		now.heap, now.fds, now.goroutines = r.heap, r.fds, r.goroutines
	}
	t.Logf("%s: before %+v, after %+v", what, before, now)
	return now
}

// leakPerReconnect is the smallest leak the memory check catches: a
// reconnect that kept 1 KiB would grow each stretch by stretch KiB.
const leakPerReconnect = 1 << 10

// grewInEvery fails when memory grew by more than a leak's bound in every
// stretch between the readings. A leak grows every stretch; a one-off
// plateau (glibc making a malloc arena for a thread of libsrt's, the Go
// heap's next size, sockets libsrt has not freed yet on a loaded machine)
// grows some of them, and passes.
func grewInEvery(t *testing.T, n int, at ...resources) {
	t.Helper()
	bound := n * leakPerReconnect
	heap, rss := true, true
	var hs, rs []int
	for i := 1; i < len(at); i++ {
		h, r := at[i].heap-at[i-1].heap, at[i].rss-at[i-1].rss
		hs, rs = append(hs, h), append(rs, r)
		heap, rss = heap && h > bound, rss && r > bound
	}
	if heap {
		t.Errorf("the Go heap grew %v bytes over %d stretches of %d reconnects (bound %d each)", hs, len(hs), n, bound)
	}
	if rss && raceOn {
		t.Logf("resident memory grew %v bytes over %d stretches of %d reconnects: not checked under -race (its shadow memory grows with every goroutine; the run without -race checks it)", rs, len(rs), n)
	} else if rss {
		t.Errorf("resident memory grew %v bytes over %d stretches of %d reconnects (bound %d each)", rs, len(rs), n, bound)
	}
}

const reconnects = 1000

// TestSRTReconnectsLeakNothing: an SRT caller input connecting 1,000
// times to an SRT listener input, each connection taken and closed on
// both sides: descriptors, goroutines and memory are where they were.
func TestSRTReconnectsLeakNothing(t *testing.T) {
	lis, err := NewSRT(SRTConfig{Listener: true, LatencyMs: 20})
	if err != nil {
		t.Skip(err) // no libsrt here
	}
	defer lis.Close()
	call, err := NewSRT(SRTConfig{Config: Config{Address: "127.0.0.1", Port: addrOf(t, lis).Port}, LatencyMs: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer call.Close()
	cycle := func() {
		type res struct {
			c   interface{ Close() error }
			err error
		}
		ch := make(chan res, 1)
		go func() { c, err := call.Connect(); ch <- res{c, err} }()
		l, err := lis.Connect()
		if err != nil {
			t.Fatalf("accepting: %v", err)
		}
		r := <-ch
		if r.err != nil {
			t.Fatalf("calling: %v", r.err)
		}
		l.Close()
		r.c.Close()
	}
	// A warm-up lets libsrt start its threads and malloc its arenas;
	// then three stretches, each measured once everything has closed.
	const warmup, stretch = 100, (reconnects - 100) / 3
	cycle()
	first := measure(t)
	for range warmup - 1 {
		cycle()
	}
	base := settled(t, first, "the warm-up")
	at := []resources{base}
	for _, what := range []string{"the first stretch", "the second stretch", "the third stretch"} {
		for range stretch {
			cycle()
		}
		at = append(at, settled(t, base, what))
	}
	if n := lis.Stats().Connections.Load(); n != warmup+3*stretch {
		t.Fatalf("%d connections taken, want %d", n, warmup+3*stretch)
	}
	grewInEvery(t, stretch, at...)
}

// TestUDPReconnectsLeakNothing: a UDP input whose stream is lost and
// comes back 1,000 times (a connection per return), and 1,000 UDP inputs
// opened, fed and closed: descriptors, goroutines and memory are where
// they were.
func TestUDPReconnectsLeakNothing(t *testing.T) {
	null := make([]byte, tsPacket)
	copy(null, []byte{0x47, 0x1f, 0xff, 0x10})
	feedOnce := func(in Input) {
		w, err := net.Dial("udp", addrOf(t, in).String())
		if err != nil {
			t.Fatal(err)
		}
		w.Write(null)
		w.Close()
		c, err := in.Connect()
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		buf := make([]byte, 2*tsPacket)
		if _, err := c.Read(buf); err != nil {
			t.Fatalf("read: %v", err)
		}
		if _, err := c.Read(buf); !errors.Is(err, ErrLost) {
			t.Fatalf("read after the stream: %v, want the loss", err)
		}
		c.Close()
	}
	in, err := NewUDP(UDPConfig{Config: Config{LossTimeout: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	feedOnce(in)
	before := measure(t)
	for range reconnects {
		feedOnce(in)
	}
	if n := in.Stats().Connections.Load(); n != reconnects+1 {
		t.Fatalf("%d connections", n)
	}
	in.Close()
	for range reconnects {
		in, err := NewUDP(UDPConfig{Config: Config{LossTimeout: time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		feedOnce(in)
		in.Close()
	}
	after := settled(t, before, "1,000 UDP losses and 1,000 UDP inputs")
	if after.heap > before.heap+4<<20 || after.rss > before.rss+24<<20 {
		t.Fatalf("memory grew over 1,000 UDP losses and 1,000 UDP inputs: before %+v, after %+v", before, after)
	}
}
