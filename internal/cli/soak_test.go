package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The soak of issue 13: `onair run` plays a show on the CPU backend while
// the page's API cuts Program every second (preview, then take), a page
// watches the Program tile (a snapshot five times a second) and 50
// clients follow GET /events. It samples the show process's resident
// memory and descriptors every ten seconds and wants, at the end, no
// missed deadline, memory and descriptors flat after the first minute,
// and every event client to have seen every switch.
//
// It is not part of `make test` (it runs for minutes): run it with
//
//	ONAIR_SOAK=10m go test -run TestSoak -v -timeout 20m ./internal/cli/
//
// ONAIR_SOAK_MAX_MISSED allows that many missed deadlines (default 0), for
// a machine busy with other work; ONAIR_SOAK_BIN runs that onair binary
// instead of building one (on a machine without Go, with the test built by
// go test -c).
func TestSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("ONAIR_SOAK"))
	if err != nil || d <= 0 {
		t.Skip("the soak runs for minutes: set ONAIR_SOAK=10m to run it")
	}
	maxMissed, _ := strconv.ParseUint(os.Getenv("ONAIR_SOAK_MAX_MISSED"), 10, 64)
	// ONAIR_SOAK_BASELINE=1 runs the same show with no client at all, to
	// tell what the machine costs the show from what the clients do.
	baseline := os.Getenv("ONAIR_SOAK_BASELINE") == "1"
	clients := 50
	if baseline {
		clients = 0
	}

	bin := os.Getenv("ONAIR_SOAK_BIN") // a built onair, on a machine without Go
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "onair")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	showPath := filepath.Join(t.TempDir(), "soak.hcl")
	if err := os.WriteFile(showPath, []byte(soakShow), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "-backend", "cpu", "-quiet", "-duration", (d + 30*time.Second).String(), "-listen", "127.0.0.1:0", showPath)
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	addr := ""
	re := regexp.MustCompile(`page: http://([0-9.:]+)/`)
	for addr == "" && lines.Scan() {
		if m := re.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatalf("onair run printed no page address:\n%s", stderr.String())
	}
	var rest bytes.Buffer
	restDone := make(chan struct{})
	go func() {
		for lines.Scan() {
			rest.WriteString(lines.Text() + "\n")
		}
		close(restDone)
	}()
	base := "http://" + addr
	pid := cmd.Process.Pid
	hc := &http.Client{Timeout: 10 * time.Second}

	// 50 event clients, each counting the switches it saw.
	seen := make([]atomic.Int64, clients)
	var wg sync.WaitGroup
	stopClients := make(chan struct{})
	var bodies sync.Map
	for i := 0; i < clients; i++ {
		resp, err := http.Get(base + "/events")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("event client %d: %v %v", i, err, resp)
		}
		bodies.Store(i, resp.Body)
		wg.Add(1)
		go func(i int, body io.ReadCloser) {
			defer wg.Done()
			sc := bufio.NewScanner(body)
			for sc.Scan() {
				if sc.Text() == "event: switch" {
					seen[i].Add(1)
				}
			}
		}(i, resp.Body)
	}
	// A page watching the Program tile.
	go func() {
		if baseline {
			return
		}
		for {
			select {
			case <-stopClients:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if resp, err := hc.Get(base + "/snapshot/bus.pgm"); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}()

	post := func(path, body string) {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", base)
		resp, err := hc.Do(req)
		if err != nil {
			t.Errorf("POST %s: %v", path, err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("POST %s: %s %s", path, resp.Status, b)
		}
	}
	type sample struct {
		at     time.Duration
		rss    int64
		fds    int
		missed uint64
	}
	var samples []sample
	read := func(at time.Duration) sample {
		s := sample{at: at, rss: procRSS(t, pid), fds: procFDs(t, pid)}
		resp, err := hc.Get(base + "/status")
		if err == nil {
			var st struct {
				Summary struct {
					Buses []struct {
						Missed uint64 `json:"missed_deadlines"`
					}
				}
			}
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			for _, b := range st.Summary.Buses {
				s.missed += b.Missed
			}
		}
		t.Logf("%6v  rss %6.1f MB  fds %3d  missed %d", at.Round(time.Second), float64(s.rss)/1e6, s.fds, s.missed)
		return s
	}

	start := time.Now()
	scenes := []string{"scene.b", "scene.a"}
	cuts := 0
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	nextSample := time.Duration(0)
	for time.Since(start) < d {
		<-tick.C
		if !baseline {
			post("/buses/pgm/preview", `{"scene":"`+scenes[cuts%2]+`"}`)
			post("/buses/pgm/take", `{"transition":"cut"}`)
			cuts++
		}
		if at := time.Since(start); at >= nextSample {
			samples = append(samples, read(at))
			nextSample += 10 * time.Second
		}
	}
	last := read(time.Since(start))
	samples = append(samples, last)
	close(stopClients)
	// Every client saw every switch: wait (generously) for the stream to
	// deliver the last ones, then hang up.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		behind := 0
		for i := range seen {
			if seen[i].Load() < int64(cuts) {
				behind++
			}
		}
		if behind == 0 {
			break
		}
		<-time.After(100 * time.Millisecond)
	}
	bodies.Range(func(_, v any) bool { v.(io.ReadCloser).Close(); return true })
	wg.Wait()
	cmd.Process.Signal(os.Interrupt)
	<-restDone // read all it printed before Wait closes the pipe
	cmd.Wait()
	t.Logf("onair run's summary:\n%s", rest.String())

	for i := range seen {
		if n := seen[i].Load(); n != int64(cuts) {
			t.Errorf("event client %d saw %d switch events of %d", i, n, cuts)
		}
	}
	if last.missed > maxMissed {
		t.Errorf("%d missed deadlines in %v (allowed: %d)", last.missed, d, maxMissed)
	}
	// Flat: over the second half of the run (the first is warm-up: pools,
	// the snapshot buffers, the clients' connections, the Go heap finding
	// its size), descriptors may not grow and memory may grow by at most
	// 5 %.
	var base0 sample
	for _, s := range samples {
		if s.at >= d/2 {
			base0 = s
			break
		}
	}
	if base0.rss == 0 {
		base0 = samples[0]
	}
	if last.fds > base0.fds+2 { // the test's own status and snapshot connections come and go
		t.Errorf("descriptors grew from %d (at %v) to %d", base0.fds, base0.at.Round(time.Second), last.fds)
	}
	if float64(last.rss) > 1.05*float64(base0.rss) {
		t.Errorf("resident memory grew from %.1f MB (at %v) to %.1f MB", float64(base0.rss)/1e6, base0.at.Round(time.Second), float64(last.rss)/1e6)
	}
	t.Logf("%d cuts in %v; %d event clients; missed deadlines %d; rss %.1f → %.1f MB; fds %d → %d",
		cuts, d, clients, last.missed, float64(base0.rss)/1e6, float64(last.rss)/1e6, base0.fds, last.fds)
}

func procRSS(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the show's memory: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func procFDs(t *testing.T, pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatalf("reading the show's descriptors: %v", err)
	}
	return len(ents)
}

const soakShow = `
show {
  name       = "soak"
  size       = "640x360"
  frame_rate = "30"
}
canvas {
  pacing_loops  = 2
  input_poll_ms = 8
}
source "test_pattern" "a" {
  pattern = "bars"
}
source "test_pattern" "b" {
  pattern = "checker"
}
source "test_pattern" "c" {
  pattern = "ramp"
  size    = "320x180"
}
scene "a" {
  layer {
    source = source.a
  }
  layer {
    source = source.c
    rect   = [440, 20, 180, 100]
  }
}
scene "b" {
  layer {
    source = source.b
  }
}
bus "program" "pgm" {
  scene = scene.a
}
bus "aux" "mon" {
  source = source.c
}
output "null" "pgm" {
  bus = bus.pgm
}
output "null" "mon" {
  bus = bus.mon
}
`
