package cpu

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/onairhq/onair/nodes/show"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onairhq/onair/control"
)

// TestTenThousandIdleConnections: a client opens 10,000 connections to a
// running show's status server and sends nothing. The server holds at most
// control.DefaultMaxConns of them (so the show keeps descriptors for its
// own files), the show goes on drawing meanwhile, and /status answers again
// once the header timeout has closed the held ones.
//
// That the show also misses no deadline meanwhile needs an idle machine (on
// a busy one the show misses some by itself, flood or not):
// BenchmarkIdleConnectionFlood measures it.
func TestTenThousandIdleConnections(t *testing.T) {
	if addr := os.Getenv(floodAddrEnv); addr != "" {
		runFlood(addr, os.Getenv(floodNEnv))
	}
	if testing.Short() {
		t.Skip("-short: opens 10,000 connections")
	}
	n := floodSize(t, 10000)

	s := startShow(t, compile(t, writeShow(t, twoSources), nil))
	defer s.Stop()
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// A fresh connection per request, as onair status makes.
	c := &control.Client{Addr: srv.Addr(), HTTP: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}}
	// missed reads the bus's ticks and missed deadlines as an operator
	// does, asking again while the server is full (it holds at most its
	// limit of the flood's connections until they time out).
	missed := func() (ticks, missed uint64) {
		var err error
		for deadline := time.Now().Add(control.DefaultReadHeaderTimeout + 30*time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			var b []byte
			if b, err = c.Status(); err != nil {
				continue
			}
			var st show.StatusReport
			if err := json.Unmarshal(b, &st); err != nil || len(st.Summary.Buses) != 1 {
				t.Fatalf("/status: %v %s", err, b)
			}
			return st.Summary.Buses[0].Ticks, st.Summary.Buses[0].Missed
		}
		t.Fatalf("/status unanswered for %v: %v", control.DefaultReadHeaderTimeout+30*time.Second, err)
		return 0, 0
	}
	waitTicks := func(k uint64) (uint64, uint64) {
		deadline := time.Now().Add(30 * time.Second)
		for {
			ticks, m := missed()
			if ticks >= k {
				return ticks, m
			}
			if time.Now().After(deadline) {
				t.Fatalf("the bus drew %d frames in 30 s, not %d", ticks, k)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	ticks0, missed0 := waitTicks(10)

	sockets0 := openSockets()
	flood := startFlood(t, srv.Addr(), n)
	peak := 0
	for line := range flood.lines {
		var k int
		if _, err := fmt.Sscanf(line, "flood open %d", &k); err != nil {
			continue
		}
		// The server may hold its limit and the one it is refusing,
		// however the dials go.
		if sockets0 > 0 {
			extra := openSockets() - sockets0
			peak = max(peak, extra)
			if extra > control.DefaultMaxConns+1 {
				t.Fatalf("with %d connections open the server holds %d more sockets, more than its limit of %d", k, extra, control.DefaultMaxConns)
			}
		}
		if k == n {
			break
		}
	}
	if err := flood.err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d idle connections open; the server held at most %d sockets for them", n, peak)

	// The held connections time out; then an operator is served again.
	flooded := time.Now()
	ticks1, missed1 := missed()
	t.Logf("/status answered %v after the last connection opened", time.Since(flooded).Round(time.Millisecond))
	if ticks1 <= ticks0 {
		t.Fatalf("the bus drew no frame during the flood (%d ticks, then %d)", ticks0, ticks1)
	}
	t.Logf("the bus drew %d frames meanwhile and missed %d deadlines", ticks1-ticks0, missed1-missed0)
}

// floodSize is how many connections a flood may open here, n at most: the
// descriptor limit is raised for them where it can be (and set back at the
// end of the test); the test is skipped when the server's own limit could
// not be passed.
func floodSize(tb testing.TB, n int) int {
	tb.Helper()
	const headroom = 1024 // the show, the server's slots, the test's own files
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		tb.Fatalf("getrlimit: %v", err)
	}
	want := uint64(n + control.DefaultMaxConns + headroom)
	if old.Cur < want {
		raised := syscall.Rlimit{Cur: min(want, old.Max), Max: old.Max}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			tb.Logf("cannot raise the descriptor limit from %d to %d: %v", old.Cur, raised.Cur, err)
			raised = old
		}
		tb.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
		if avail := int(raised.Cur) - control.DefaultMaxConns - headroom; avail < n {
			tb.Logf("the descriptor limit is %d (hard limit %d): opening %d connections instead of %d", raised.Cur, old.Max, avail, n)
			n = avail
		}
	}
	if n <= control.DefaultMaxConns {
		tb.Skipf("the descriptor limit allows only %d connections, not more than the server's %d", n, control.DefaultMaxConns)
	}
	return n
}

// BenchmarkIdleConnectionFlood measures what TestTenThousandIdleConnections
// leaves to an idle machine: the deadlines a show misses while another
// process (at the lowest priority) opens 10,000 idle connections to its
// status server. On an idle machine, missed/run is 0.
func BenchmarkIdleConnectionFlood(b *testing.B) {
	n := floodSize(b, 10000)
	var missed, ticks uint64
	for i := 0; i < b.N; i++ {
		s := startShow(b, compile(b, writeShowIn(b, b.TempDir(), twoSources), nil))
		srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0"})
		if err != nil {
			b.Fatal(err)
		}
		t0 := busOf(waitShow(b, s, "30 ticks", ticksAtLeast("bus.pgm", 30)), "bus.pgm")
		f := startFlood(b, srv.Addr(), n)
		for line := range f.lines {
			if line == fmt.Sprintf("flood open %d", n) {
				break
			}
		}
		if err := f.err(); err != nil {
			b.Fatal(err)
		}
		t1 := busOf(s.State.Summary(), "bus.pgm")
		srv.Close()
		s.Stop()
		missed += t1.Missed - t0.Missed
		ticks += t1.Ticks - t0.Ticks
	}
	b.ReportMetric(float64(missed)/float64(b.N), "missed/run")
	b.ReportMetric(float64(ticks)/float64(b.N), "ticks/run")
}

// openSockets is how many sockets the process holds, or 0 where /proc
// does not say.
func openSockets() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// The flood comes from another process, the test binary run again at the
// lowest CPU priority, as an attacker's machine would: what it costs to
// open connections is not charged to the show, what the server does with
// them is. It prints "flood open K" every 1,000 connections and holds them
// until its standard input closes.
const floodAddrEnv, floodNEnv = "ONAIR_TEST_FLOOD_ADDR", "ONAIR_TEST_FLOOD_N"

type flood struct {
	lines  chan string
	cmd    *exec.Cmd
	stderr bytes.Buffer
	failed string
}

func (f *flood) err() error {
	if f.failed != "" {
		return fmt.Errorf("the flood: %s%s", f.failed, f.stderr.String())
	}
	return nil
}

func startFlood(t testing.TB, addr string, n int) *flood {
	t.Helper()
	args := []string{os.Args[0], "-test.run=^TestTenThousandIdleConnections$", "-test.count=1"}
	if nice, err := exec.LookPath("nice"); err == nil {
		args = append([]string{nice, "-n", "19"}, args...)
	} else {
		t.Logf("no nice command (%v): the flood runs at the show's priority", err)
	}
	f := &flood{lines: make(chan string), cmd: exec.Command(args[0], args[1:]...)}
	f.cmd.Env = append(os.Environ(), floodAddrEnv+"="+addr, fmt.Sprintf("%s=%d", floodNEnv, n))
	f.cmd.Stderr = &f.stderr
	stdin, err := f.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := f.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.cmd.Start(); err != nil {
		t.Fatalf("starting the flood: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close() // the flood closes its connections and exits
		f.cmd.Wait()
	})
	go func() {
		defer close(f.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "flood error") {
				f.failed = line + "\n"
			}
			if strings.HasPrefix(line, "flood ") {
				f.lines <- line
			}
		}
		if f.failed == "" {
			f.failed = "exited before opening every connection\n"
		}
	}()
	return f
}

// runFlood is the flood's side: open n connections to addr, send nothing,
// hold them until standard input closes.
func runFlood(addr, n string) {
	var want int
	fmt.Sscan(n, &want)
	conns := make([]net.Conn, 0, want)
	for len(conns) < want {
		c, err := net.DialTimeout("tcp", addr, 30*time.Second)
		if err != nil {
			fmt.Printf("flood error: connection %d to %s: %v\n", len(conns)+1, addr, err)
			os.Exit(1)
		}
		conns = append(conns, c)
		if len(conns)%1000 == 0 || len(conns) == want {
			fmt.Printf("flood open %d\n", len(conns))
		}
	}
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}
