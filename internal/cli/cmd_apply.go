package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/compiler/diff"
	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/internal/backends"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
	"github.com/onairhq/onair/showerr"
)

func init() {
	register(&command{
		name: "apply",
		summary: "Change a running show to an edited show file without going off air: prints the diff against the plan on air, " +
			"then applies it when every change can be made live (scenes and their layers, scenes added to a bus, sources added " +
			"and the feeds to buses and AUX routes from them, the params the registry marks live); anything else is refused whole.",
		usage: "[-addr HOST:PORT|https://HOST:PORT] [-token TOKEN] [-tls-ca FILE] [-var NAME=VALUE ...] [-dry-run] SHOW",
		run:   runApply,
	})
}

func runApply(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["apply"], stderr)
	var client control.Client
	fs.StringVar(&client.Addr, "addr", control.DefaultAddr, "address of the show's status server (onair run -listen)")
	fs.StringVar(&client.Token, "token", os.Getenv("ONAIR_TOKEN"), "token for a server on a non-loopback address (default $ONAIR_TOKEN)")
	fs.StringVar(&client.CA, "tls-ca", "", "trust the CA certificates in this PEM `FILE` for an https:// -addr (default: the system's)")
	dry := fs.Bool("dry-run", false, "print the diff against the show on air and what apply would change, or refuse and why (exit 1), and change nothing")
	vf := addVarFlags(fs)
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "onair apply: want one show, got %d arguments\n", fs.NArg())
		fs.Usage()
		return 2
	}
	onAir, err := client.Plan()
	if err != nil {
		fmt.Fprintf(stderr, "onair apply: %v\n", err)
		return 1
	}
	cur, err := loadSavedPlan(onAir)
	if err != nil {
		fmt.Fprintf(stderr, "onair apply: the plan on air: %v\n", err)
		return 1
	}
	// Compiled as the show on air was: its backend's lowering, its profile.
	target, err := backends.Lookup(cur.Backend)
	if err != nil {
		fmt.Fprintf(stderr, "onair apply: the show on air runs on %v\n", err)
		return 1
	}
	p, err := loadPlanOrShow(fs.Arg(0), vf.options(), compiler.Options{ToolVersion: version, Profile: cur.Profile, Target: target.Lowering, HostProfile: hostProfile(target.Lowering)}, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "onair apply: %s: %v\n", fs.Arg(0), err)
		return 1
	}
	r := diff.Diff(cur, p)
	r.Old.Label, r.New.Label = "on air at "+client.Addr, fs.Arg(0)
	if err := r.WriteText(stdout); err != nil {
		fmt.Fprintf(stderr, "onair apply: %v\n", err)
		return 1
	}
	if !r.Changed() {
		return 0
	}
	// What onair lint would say of the new show, before it goes on air.
	if n := lintBeforeApply(fs.Arg(0), vf.options(), compiler.Options{ToolVersion: version, Profile: cur.Profile, Target: target.Lowering, HostProfile: hostProfile(target.Lowering)}, stderr); n > 0 {
		fmt.Fprintf(stderr, "onair apply: refused, nothing sent: the show has %s (above); fix them and apply again\n", plural(n, "lint error"))
		return 1
	}
	if *dry {
		// What apply would do: the same predicate the show's POST /plan runs.
		if lv := r.Live; len(lv.Refused) > 0 {
			fmt.Fprintf(stderr, "onair apply: -dry-run: apply would refuse, nothing would change: %s\n", refusedText(lv.Refused))
			return 1
		}
		fmt.Fprintf(stdout, "\nwould apply on air: %s\n", strings.Join(r.Live.Elements, ", "))
		if srcs := r.Live.Add.Sources(); len(srcs) > 0 {
			fmt.Fprintf(stdout, "would start on air first: %s (%d nodes), each ready before any scene that shows it joins a bus\n", strings.Join(srcs, ", "), len(r.Live.Add.Nodes))
		}
		return 0
	}
	js, err := plan.Marshal(p)
	if err != nil {
		fmt.Fprintf(stderr, "onair apply: %v\n", err)
		return 1
	}
	ans, err := client.Apply(js)
	if errors.Is(err, control.ErrNoAnswer) {
		return lostAnswer(&client, p, err, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "onair apply: %v\n", err)
		return 1
	}
	var done applied
	if err := json.Unmarshal(ans, &done); err != nil {
		fmt.Fprintf(stderr, "onair apply: the show answered %.200s\n", ans)
		return 1
	}
	fmt.Fprintf(stdout, "\napplied on air: %s\n", strings.Join(done.Applied, ", "))
	return 0
}

// lostAnswer is the outcome of an apply whose answer did not come back
// (err): the plan on air says whether the show took p.
func lostAnswer(client *control.Client, p *plan.Plan, err error, stdout, stderr io.Writer) int {
	onAir, perr := client.Plan()
	var now *plan.Plan
	if perr == nil {
		now, perr = loadSavedPlan(onAir)
	}
	if perr != nil {
		fmt.Fprintf(stderr, "onair apply: %v\nonair apply: and the plan on air cannot be read either (%v): whether the show took the change is unknown; onair apply -dry-run SHOW shows what is on air\n", err, perr)
		return 1
	}
	if diff.Diff(now, p).Changed() {
		fmt.Fprintf(stderr, "onair apply: %v\nonair apply: the plan on air is not the one sent: nothing was applied\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "\napplied on air: the plan on air is the one sent (the show's answer was lost: %v)\n", err)
	return 0
}

// applied is the answer of POST /plan.
type applied struct {
	// Applied lists the show elements changed on air.
	Applied []string `json:"applied"`
}

// checkLiveCanvas checks the new value of each canvas setting that
// reaches the show through a live param (nodes.LiveCanvas) against that
// param's declaration: a value out of range is refused before any diff.
func checkLiveCanvas(p *plan.Plan) error {
	for _, name := range slices.Sorted(maps.Keys(p.Canvas)) {
		if _, prm, ok := nodes.LiveCanvas(name); ok {
			if err := prm.Check(p.Canvas[name]); err != nil {
				return fmt.Errorf("canvas.%s: %v", name, err)
			}
		}
	}
	return nil
}

// liveApply is a running show's POST /plan: it compares the plan sent with
// the one on air (compiler/diff) and carries out the changes that can be
// made on air: new layers, new scenes, scenes added at the end of a bus's
// list (nodes/show's ApplyLive: every bus showing one draws the new layers
// from its next tick, and can switch to the new ones), live params, and
// sources added with their feeds, started and ready first (liveadd.go).
// Any other change, or a plan it cannot read, is refused whole: nothing
// changes.
type liveApply struct {
	mu   sync.Mutex
	show show.Running
	cur  *plan.Plan // the plan on air, as last applied
}

func (a *liveApply) Apply(body []byte) (any, error) {
	p, err := loadSavedPlan(body)
	if err != nil {
		return nil, fmt.Errorf("the plan sent: %v: %w", err, showerr.ErrInvalid)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := sameTarget(a.cur, p); err != nil {
		return nil, fmt.Errorf("refused, nothing changed: %v: %w", err, showerr.ErrConflict)
	}
	if err := checkLiveCanvas(p); err != nil {
		return nil, fmt.Errorf("the plan sent: %v: %w", err, showerr.ErrInvalid)
	}
	ch, names, refused := liveChange(a.cur, p)
	if len(refused) > 0 {
		return nil, fmt.Errorf("refused, nothing changed: %s: %w", refusedText(refused), showerr.ErrConflict)
	}
	if len(names) > 0 {
		js, err := plan.Marshal(p)
		if err != nil {
			return nil, err
		}
		if len(js) > control.MaxPlanBytes {
			// The show serves the plan on air (GET /plan), which every
			// client reads up to this bound.
			return nil, fmt.Errorf("refused, nothing changed: the plan is %d bytes as the show serves it, more than the %d MiB a client reads: %w", len(js), control.MaxPlanBytes>>20, showerr.ErrInvalid)
		}
		if err := a.show.ApplyLive(ch, js); err != nil {
			return nil, err
		}
		a.cur = p
	}
	return applied{Applied: append([]string{}, names...)}, nil
}

// sameTarget refuses a plan for another show, backend or capacity
// profile than the plan on air: it was compiled for something else, and
// running parts of it on this show would make GET /plan say what the
// show is not.
func sameTarget(cur, p *plan.Plan) error {
	var bad []string
	if p.Show != cur.Show {
		bad = append(bad, fmt.Sprintf("it is show %q, the show on air is %q", p.Show, cur.Show))
	}
	if p.Backend != cur.Backend {
		bad = append(bad, fmt.Sprintf("it was compiled for the %s backend, the show on air runs on %s", orNone(p.Backend), orNone(cur.Backend)))
	}
	if p.Profile != cur.Profile {
		bad = append(bad, fmt.Sprintf("it was checked against capacity profile %s, the show on air against %s", orNone(p.Profile), orNone(cur.Profile)))
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("the plan sent is not for the show on air: %s; onair apply SHOW compiles a show file for the show on air", strings.Join(bad, "; "))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return fmt.Sprintf("%q", s)
}

// liveChange is what of the difference between the plan on air (cur) and
// p can be made on air, the elements it changes (names), and what cannot
// (refused: each says what changed and why it needs the show restarted):
// compiler/diff's Live, the predicate onair diff marks "# live" by and
// apply -dry-run reports. Its cost is linear in the plans' sizes.
func liveChange(cur, p *plan.Plan) (ch show.LiveChange, names, refused []string) {
	lv := diff.Diff(cur, p).Live
	grow := runtime.Extension{Nodes: lv.Add.Nodes, Edges: lv.Add.Edges, Groups: lv.Add.Groups, Loops: lv.Add.Loops}
	return show.LiveChange{Scenes: lv.Scenes, RenameScenes: lv.Renames, Updates: lv.Updates, Grow: grow}, lv.Elements, lv.Refused
}

// refusedText says what needs the show restarted.
func refusedText(refused []string) string {
	return "these changes need the show restarted (on air, onair changes, adds and renames scenes, starts sources added and routes buses to them, and changes the params the registry marks live, nothing else): " + strings.Join(refused, "; ")
}
