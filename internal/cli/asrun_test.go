package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/onairhq/onair/internal/testwait"
	onairshow "github.com/onairhq/onair/nodes/show"
)

// TestRunWritesTheAsRunLog runs a show with two cues and -as-run: the
// file holds, line by line, each switch the summary reports, asked for
// (from a cue) and drawn on the tick the summary says, with that tick's
// timecode; the log has the same lines at info level.
func TestRunWritesTheAsRunLog(t *testing.T) {
	show := writeRunShow(t)
	asRun := filepath.Join(t.TempDir(), "as-run.jsonl")
	rc, out, errs := runCLI(t, "run", "-duration", "2s", "-listen", "", "-as-run", asRun,
		"-cue", "500ms bus.pgm scene.b", "-cue", "1s bus.pgm scene.a fade 200ms", show)
	if rc != 0 {
		t.Fatalf("rc=%d\n%s\n%s", rc, out, errs)
	}
	summary := regexp.MustCompile(`(cut|fade) to (scene\.\w+) asked at [0-9.]+s, on tick ([0-9]+) \(drawn at [0-9.]+s\), timecode (\S+)`).FindAllStringSubmatch(out, -1)
	if len(summary) != 2 {
		t.Fatalf("the summary reports %d switches drawn, want 2:\n%s", len(summary), out)
	}
	f, err := os.Open(asRun)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type line struct {
		Event, Bus, Scene, Transition, Timecode, Origin string
		Tick                                            *int64
	}
	var asked, drawn []line
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("as-run line %q: %v", sc.Text(), err)
		}
		switch l.Event {
		case "switch_asked":
			asked = append(asked, l)
		case "switch_drawn":
			drawn = append(drawn, l)
		}
	}
	if len(asked) != 2 || len(drawn) != 2 {
		t.Fatalf("the as-run log has %d switches asked for and %d drawn, want 2 and 2", len(asked), len(drawn))
	}
	for i, s := range summary {
		tick, _ := strconv.ParseInt(s[3], 10, 64)
		a, d := asked[i], drawn[i]
		if a.Transition != s[1] || a.Scene != s[2] || a.Origin != "cue" || a.Bus != "bus.pgm" {
			t.Errorf("switch %d asked for: %+v; the summary: %s", i, a, s[0])
		}
		if d.Transition != s[1] || d.Scene != s[2] || d.Tick == nil || *d.Tick != tick || d.Timecode != s[4] || d.Origin != "cue" {
			t.Errorf("switch %d drawn: %+v; the summary: %s", i, d, s[0])
		}
		if want := "msg=as-run event=switch_drawn bus=bus.pgm tick=" + s[3] + " timecode=" + s[4]; !strings.Contains(errs, want) {
			t.Errorf("the log lacks %q:\n%s", want, errs)
		}
	}
}

// An as-run path that cannot be written is refused before the show goes
// on air, and a timecode cue that does not exist at the show's rate
// before it starts.
func TestRunRefusesAnUnwritableAsRunLogAndBadTimecodes(t *testing.T) {
	show := writeRunShow(t)
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"-as-run", filepath.Join(dir, "no", "such", "dir", "as-run.jsonl")}, "the directory " + filepath.Join(dir, "no", "such", "dir") + " does not exist"},
		{[]string{"-as-run", dir}, "is not a regular file"},
		{[]string{"-as-run", filepath.Join(dir, "a.jsonl"), "-as-run-fsync", "often"}, `fsync "often": give one of second, line`},
		{[]string{"-as-run-fsync", "line"}, "-as-run-fsync line without -as-run"},
		{[]string{"-cue", "00:00:00:30 bus.pgm scene.b"}, `timecode "00:00:00:30": frame 30: at 30 non-drop frames run from 00 to 29`},
		{[]string{"-cue", "00:00:0x:00 bus.pgm scene.b"}, `seconds "0x" is not a number`},
	}
	if os.Geteuid() != 0 { // root writes anywhere
		cases = append(cases, struct {
			args []string
			msg  string
		}{[]string{"-as-run", filepath.Join(ro, "as-run.jsonl")}, "onair may not write there"})
	}
	for _, c := range cases {
		args := append(append([]string{"run", "-duration", "5s", "-listen", ""}, c.args...), show)
		rc, out, errs := runCLI(t, args...)
		if rc != 2 || !strings.Contains(errs, c.msg) || strings.Contains(out, "on air:") {
			t.Errorf("onair %s: rc=%d\nstdout:\n%s\nstderr:\n%s\nwant rc=2, %q and nothing on air", strings.Join(args, " "), rc, out, errs, c.msg)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(show), "pgm.y4m")); err == nil {
			t.Errorf("onair %s: the recording was written", strings.Join(args, " "))
		}
	}
}

// TestAsRunLinesSurviveAKill runs onair in a child process with a switch
// cued every 50 ms and -as-run, and kills it (SIGKILL: no deferred close,
// no flush, no fsync) while it writes: every line that was in the file
// before the kill is still there, in order, and the file holds whole
// lines only, each a JSON line of the as-run log.
func TestAsRunLinesSurviveAKill(t *testing.T) {
	show := writeRunShow(t)
	asRun := filepath.Join(t.TempDir(), "as-run.jsonl")
	args := []string{"run", "-duration", "60s", "-listen", "", "-as-run", asRun}
	for i := 1; i < 1000; i++ {
		args = append(args, "-cue", fmt.Sprintf("%dms bus.pgm scene.%c", 50*i, "ab"[i%2]))
	}
	args = append(args, show)
	enc, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ONAIR_TEST_RUN="+string(enc))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	// Wait for 40 lines, then read what is there and kill at once: more
	// lines are being written as it dies.
	var before []byte
	testwait.Until(t, eventBound, "40 as-run lines", func() bool {
		b, _ := os.ReadFile(asRun)
		if bytes.Count(b, []byte("\n")) < 40 {
			return false
		}
		before = b
		return true
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed = true
	if err := cmd.Wait(); err == nil {
		t.Fatalf("onair exited cleanly before it was killed:\n%s", out.String())
	}
	after, err := os.ReadFile(asRun)
	if err != nil {
		t.Fatal(err)
	}
	// What was read before the kill may end inside a line being written
	// (a reader can see a write(2) land); up to its last newline it must
	// be in the file after, as it was.
	whole := before[:bytes.LastIndexByte(before, '\n')+1]
	if !bytes.HasPrefix(after, whole) {
		t.Fatalf("the file after the kill does not begin with the %d bytes of whole lines it held before", len(whole))
	}
	if len(after) == 0 || after[len(after)-1] != '\n' {
		t.Fatalf("the file ends inside a line after the kill: %q", after[max(0, len(after)-80):])
	}
	asked, drawn := 0, 0
	for i, l := range bytes.Split(after[:len(after)-1], []byte("\n")) {
		var line onairshow.AsRunLine
		if err := json.Unmarshal(l, &line); err != nil || line.Event == "" || line.Time.IsZero() {
			t.Fatalf("line %d of the as-run log after the kill is not a whole line: %q (%v)", i+1, l, err)
		}
		switch line.Event {
		case "switch_asked":
			asked++
		case "switch_drawn":
			drawn++
		}
	}
	if asked < 20 || drawn < 19 {
		t.Errorf("%d switches asked for and %d drawn in the log, want at least 20 and 19", asked, drawn)
	}
}
