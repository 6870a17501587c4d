package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/compiler/diff"
	"github.com/onairhq/onair/internal/backends"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/showerr"
)

// What an SRE's process manager needs of `onair run`: logs in text or
// JSON, a reason for every stop, a reload on SIGHUP that applies the show
// file live, and systemd's notifications (sd_notify).

// newRunLogger is the run's logger: slog's text handler, or its JSON
// handler for -log-format json (a JSON object a line, with time, level and
// msg).
func newRunLogger(format string, w io.Writer, level slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("-log-format %q: use text or json", format)
}

// errDurationReached is the cause of a stop at the end of -duration.
var errDurationReached = errors.New("-duration reached")

// signalName is a signal as an operator writes it.
func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// stopReason says why a run stopped: the cause its context was cancelled
// with (a signal, -duration), or the node that failed.
func stopReason(ctx context.Context, failure error) string {
	if failure != nil && !errors.Is(failure, context.Canceled) {
		return "a node failed for good: " + failure.Error()
	}
	if cause := context.Cause(ctx); cause != nil {
		return cause.Error()
	}
	return "the show ended"
}

// notifier sends systemd's service notifications (sd_notify(3)) to
// $NOTIFY_SOCKET, a unix datagram socket (a path, or an abstract name
// written with a leading '@'). Without the variable it does nothing.
type notifier struct {
	conn *net.UnixConn
	log  *slog.Logger
	// watchdog is half of $WATCHDOG_USEC when systemd asks this process
	// for keep-alives ($WATCHDOG_PID unset or this process); 0: none.
	watchdog time.Duration
}

// newNotifier reads $NOTIFY_SOCKET and $WATCHDOG_USEC.
func newNotifier(log *slog.Logger) *notifier {
	n := &notifier{log: log}
	name := os.Getenv("NOTIFY_SOCKET")
	if name == "" {
		return n
	}
	if name[0] != '/' && name[0] != '@' {
		log.Warn("NOTIFY_SOCKET is neither a path nor an abstract socket name (@NAME): no notifications to systemd", "NOTIFY_SOCKET", name)
		return n
	}
	// Go's net package reads a leading '@' as the abstract namespace.
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		log.Warn("cannot reach systemd's notification socket: no notifications", "NOTIFY_SOCKET", name, "error", err)
		return n
	}
	n.conn = conn
	if us := os.Getenv("WATCHDOG_USEC"); us != "" {
		v, err := strconv.ParseInt(us, 10, 64)
		pid := os.Getenv("WATCHDOG_PID")
		switch {
		case err != nil || v <= 0:
			log.Warn("WATCHDOG_USEC is not a positive number of microseconds: no watchdog keep-alives", "WATCHDOG_USEC", us)
		case pid != "" && pid != strconv.Itoa(os.Getpid()):
			// The watchdog is another process's.
		default:
			n.watchdog = time.Duration(v) * time.Microsecond / 2
		}
	}
	return n
}

// send sends one notification: lines of VAR=VALUE.
func (n *notifier) send(lines ...string) {
	if n.conn == nil {
		return
	}
	if _, err := n.conn.Write([]byte(strings.Join(lines, "\n") + "\n")); err != nil {
		n.log.Warn("cannot notify systemd", "message", strings.Join(lines, " "), "error", err)
	}
}

// keepAlive sends WATCHDOG=1 every half of $WATCHDOG_USEC until ctx
// ends, while ready says the show is on air: a show whose buses stopped
// drawing gets no keep-alive, and systemd's WatchdogSec acts on it (its
// Restart=).
func (n *notifier) keepAlive(ctx context.Context, ready func() error) {
	if n.conn == nil || n.watchdog <= 0 {
		return
	}
	t := time.NewTicker(n.watchdog)
	defer t.Stop()
	for {
		if err := ready(); err != nil {
			n.log.Warn("no watchdog keep-alive to systemd: the show is not on air", "reason", err)
		} else {
			n.send("WATCHDOG=1")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (n *notifier) close() {
	if n.conn != nil {
		n.conn.Close()
	}
}

// reloader re-reads the show file on SIGHUP and applies it to the show
// on air as `onair apply SHOW` would: compiled for the backend and
// profile of the plan on air, diffed against it, linted, and handed to
// the same Applier POST /plan uses, which refuses whole what needs a
// restart. The show stays on air either way; the log says what happened.
type reloader struct {
	paths []string
	vars  lang.Options
	apply *liveApply
	log   *slog.Logger
}

// reload reads and applies the show file once.
func (rl *reloader) reload() {
	log := rl.log
	if len(rl.paths) != 1 {
		log.Error("reload refused: the show stays on air as it was; a reload reads one show file or directory, and this run was given several", "paths", strings.Join(rl.paths, " "))
		return
	}
	path := rl.paths[0]
	rl.apply.mu.Lock()
	cur := rl.apply.cur
	rl.apply.mu.Unlock()
	log.Info("reload: reading the show file (SIGHUP)", "path", path)
	// Compiled as the show on air was: its backend's lowering, its
	// profile (as onair apply does).
	target, err := backends.Lookup(cur.Backend)
	if err != nil {
		log.Error("reload refused: the show stays on air as it was", "path", path, "error", err)
		return
	}
	copts := compiler.Options{ToolVersion: version, Profile: cur.Profile, Target: target.Lowering, HostProfile: hostProfile(target.Lowering)}
	var diags bytes.Buffer
	p, err := loadPlanOrShow(path, rl.vars, copts, &diags)
	if err != nil {
		log.Error("reload refused: the show stays on air as it was", "path", path, "error", err, "diagnostics", strings.TrimSpace(diags.String()))
		return
	}
	r := diff.Diff(cur, p)
	if !r.Changed() {
		log.Info("reload: no change to apply", "path", path)
		return
	}
	r.Old.Label, r.New.Label = "on air", path
	var text bytes.Buffer
	r.WriteText(&text)
	if n := lintBeforeApply(path, rl.vars, copts, &diags); n > 0 {
		log.Error("reload refused, nothing changed: the show stays on air as it was", "path", path, "error", fmt.Sprintf("the show has %s; fix them and reload again", plural(n, "lint error")), "diagnostics", strings.TrimSpace(diags.String()))
		return
	}
	js, err := plan.Marshal(p)
	if err != nil {
		log.Error("reload refused: the show stays on air as it was", "path", path, "error", err)
		return
	}
	ans, err := rl.apply.Apply(js)
	if err != nil {
		if errors.Is(err, showerr.ErrConflict) {
			log.Error("reload refused: the changes need a restart (onair run again); the show stays on air as it was", "path", path, "error", err, "diff", strings.TrimSpace(text.String()))
			return
		}
		log.Error("reload refused: the show stays on air as it was", "path", path, "error", err)
		return
	}
	var names []string
	if a, ok := ans.(applied); ok {
		names = a.Applied
	}
	log.Info("reloaded: applied on air", "path", path, "applied", strings.Join(names, ", "), "diff", strings.TrimSpace(text.String()))
}
