//go:build linux

package lang

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Each hostile case runs in a subprocess, this test binary run again, with
// its address space capped (RLIMIT_AS): a case that ran away with memory
// fails there (Go dies when it cannot map more) instead of taking the
// machine, and a case that ran away with time is killed at the timeout.
// Within those bounds the subprocess reports its diagnostics, the CPU time
// Load took and its peak memory (VmHWM, the most resident memory it ever
// had). Time is asserted as the subprocess's CPU time, which a busy
// machine does not inflate as it does the time on the clock.

const (
	hostileCaseEnv = "ONAIR_HOSTILE_CASE"
	hostileDirEnv  = "ONAIR_HOSTILE_DIR"
	// hostileAddressSpace caps the subprocess's address space. Go's runtime
	// reserves some hundreds of MB it never touches (under a 1 GiB cap some
	// cases die at start); 1.5 GiB leaves it room while a case holding a
	// gigabyte dies.
	hostileAddressSpace = 1536 << 20
	// hostilePeak is what a case may hold at most, resident.
	hostilePeak = 1 << 30
	// hostileCPU is the CPU time a case may take, start to end; each
	// takes milliseconds to a second.
	hostileCPU = 5 * time.Second
	// hostileTimeout kills a case that runs away (the ones this suite
	// guards against ran for minutes), with room for a busy machine.
	hostileTimeout = 30 * time.Second
)

func TestMain(m *testing.M) {
	if name := os.Getenv(hostileCaseEnv); name != "" {
		os.Exit(runHostileCase(name, os.Getenv(hostileDirEnv)))
	}
	os.Exit(m.Run())
}

// hostileReport is what the subprocess prints.
type hostileReport struct {
	Diags     []*diagOut `json:"diags"`
	CPUMillis float64    `json:"cpu_millis"` // Load's
	PeakKB    int64      `json:"peak_kb"`
}

// cpuTime is the process's CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runHostileCase is the subprocess: cap memory, load the case, report.
func runHostileCase(name, dir string) int {
	lim := syscall.Rlimit{Cur: hostileAddressSpace, Max: hostileAddressSpace}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		return 2
	}
	if name == runawayCase {
		return runaway()
	}
	c, ok := hostileTest(name)
	if !ok {
		fmt.Fprintln(os.Stderr, "no hostile case", name)
		return 2
	}
	paths, opts := c.setup(dir)
	start := cpuTime()
	_, diags := Load(paths, opts)
	rep := hostileReport{CPUMillis: float64((cpuTime() - start).Microseconds()) / 1000, PeakKB: peakKB()}
	for _, d := range diags {
		o := &diagOut{Error: d.Severity == hcl.DiagError, Summary: d.Summary, Detail: d.Detail}
		if d.Subject != nil {
			o.File, o.Line, o.Column = d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column
		}
		rep.Diags = append(rep.Diags, o)
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 2
	}
	return 0
}

// peakKB is the process's peak resident memory (VmHWM), in KiB.
func peakKB() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return -1
}

// TestHostileInputs runs every hostile case and checks it ends with its
// diagnostic, within the time and memory bounds. -v prints each case's
// time and peak memory.
func TestHostileInputs(t *testing.T) {
	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), hostileTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), hostileCaseEnv+"="+c.name, hostileDirEnv+"="+dir)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				t.Fatalf("still running after %v", hostileTimeout)
			}
			if err != nil {
				t.Fatalf("the case crashed (%v):\n%s", err, tail(stderr.String(), 2000))
			}
			var rep hostileReport
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("report: %v\n%s", err, tail(stdout.String(), 2000))
			}
			got := errorLines(rep.Diags, dir)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("errors:\n got  %q\n want %q", got, c.want)
			}
			if len(rep.Diags) > 0 && !strings.Contains(rep.Diags[0].Detail, c.detail) {
				t.Errorf("detail %q lacks %q", rep.Diags[0].Detail, c.detail)
			}
			if rep.PeakKB*1024 > hostilePeak {
				t.Errorf("peak resident memory %d MiB, more than %d MiB", rep.PeakKB>>10, hostilePeak>>20)
			}
			if cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(); cpu > hostileCPU {
				t.Errorf("took %v of CPU, more than %v", cpu, hostileCPU)
			}
			t.Logf("Load: %.1f ms of CPU, peak %d MiB resident", rep.CPUMillis, rep.PeakKB>>10)
		})
	}
}

// The cap is real: a subprocess that holds more than it allows dies.
func TestHostileCapStopsARunaway(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), hostileCaseEnv+"="+runawayCase)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("a subprocess holding 2 GiB under a %d MiB cap did not fail:\n%s", hostileAddressSpace>>20, tail(string(out), 1000))
	}
}

// runawayCase is the subprocess of TestHostileCapStopsARunaway.
const runawayCase = "-runaway"

// runaway holds 2 GiB. It does not write them: the cap is on address
// space, so the subprocess dies all the same, without taking the memory.
func runaway() int {
	var keep [][]byte
	for i := 0; i < 32; i++ {
		b := make([]byte, 64<<20)
		b[0] = 1
		keep = append(keep, b)
	}
	fmt.Printf("held %d MiB\n", len(keep)*64)
	return 0
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
