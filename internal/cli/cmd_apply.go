package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/compiler/diff"
	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/internal/backends"
	"github.com/onairhq/onair/nodes/show"
)

func init() {
	register(&command{
		name: "apply",
		summary: "Change a running show to an edited show file without going off air: prints the diff against the plan on air, " +
			"then applies it when every change can be made live (scenes' layers today); anything else is refused whole.",
		usage: "[-addr HOST:PORT] [-token TOKEN] [-var NAME=VALUE ...] [-dry-run] SHOW",
		run:   runApply,
	})
}

func runApply(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["apply"], stderr)
	var client control.Client
	fs.StringVar(&client.Addr, "addr", control.DefaultAddr, "address of the show's status server (onair run -listen)")
	fs.StringVar(&client.Token, "token", os.Getenv("ONAIR_TOKEN"), "token for a server on a non-loopback address (default $ONAIR_TOKEN)")
	dry := fs.Bool("dry-run", false, "print the diff against the show on air and change nothing")
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
	p, err := loadPlanOrShow(fs.Arg(0), vf.options(), compiler.Options{ToolVersion: version, Profile: cur.Profile, Target: target.Lowering}, stderr)
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
	if *dry || !r.Changed() {
		return 0
	}
	js, err := plan.Marshal(p)
	if err != nil {
		fmt.Fprintf(stderr, "onair apply: %v\n", err)
		return 1
	}
	ans, err := client.Apply(js)
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

// applied is the answer of POST /plan.
type applied struct {
	// Applied lists the show elements changed on air.
	Applied []string `json:"applied"`
}

// liveApply is a running show's POST /plan: it compares the plan sent with
// the one on air (compiler/diff) and carries out the changes that can be
// made on air, today the layers of scenes (nodes/show's UpdateScenes: every
// bus showing one draws the new layers from its next tick). Any other
// change, or a plan it cannot read, is refused whole: nothing changes.
type liveApply struct {
	mu   sync.Mutex
	show show.Running
	cur  *plan.Plan // the plan on air, as last applied
}

func (a *liveApply) Apply(body []byte) (any, error) {
	p, err := loadSavedPlan(body)
	if err != nil {
		return nil, fmt.Errorf("the plan sent: %v: %w", err, control.ErrInvalid)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	r := diff.Diff(a.cur, p)
	var scenes []plan.Scene
	var names, refused []string
	for _, sa := range r.Show {
		refused = append(refused, sa.Name+" changed")
	}
	for _, c := range r.Changes {
		if c.Element == "scene" && c.Action == diff.Update && len(c.Nodes) == 0 {
			for _, sc := range p.Scenes {
				if sc.Address == c.Address {
					scenes = append(scenes, sc)
				}
			}
			names = append(names, c.Address)
			continue
		}
		refused = append(refused, fmt.Sprintf("%s %s (%s)", c.Address, c.Action, c.Reason))
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("refused, nothing changed: these changes need the show restarted (on air, onair changes scenes' layers only): %s: %w", strings.Join(refused, "; "), control.ErrConflict)
	}
	if len(scenes) > 0 {
		js, err := plan.Marshal(p)
		if err != nil {
			return nil, err
		}
		if err := a.show.UpdateScenes(scenes, js); err != nil {
			return nil, err
		}
		a.cur = p
	}
	return applied{Applied: append([]string{}, names...)}, nil
}
