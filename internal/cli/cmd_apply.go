package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
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

// liveCanvas are the canvas settings whose change reaches the show only
// through node params that ApplyLive changes (each node change is checked
// below as any other).
var liveCanvas = map[string]bool{"canvas.input_poll_ms": true, "canvas.aux_input_poll_ms": true}

// liveApply is a running show's POST /plan: it compares the plan sent with
// the one on air (compiler/diff) and carries out the changes that can be
// made on air, today scenes: new layers, new scenes, scenes added at the
// end of a bus's list (nodes/show's ApplyLive: every bus showing one
// draws the new layers from its next tick, and can switch to the new ones).
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
		return nil, fmt.Errorf("the plan sent: %v: %w", err, control.ErrInvalid)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	r := diff.Diff(a.cur, p)
	var scenes []plan.Scene
	var names, refused []string
	for _, sa := range r.Show {
		if !liveCanvas[sa.Name] {
			refused = append(refused, sa.Name+" changed")
		}
	}
	add := map[string][]string{}
	polls := map[string]int{}
	for _, c := range r.Changes {
		switch {
		case c.Element == "scene" && (c.Action == diff.Update || c.Action == diff.Create) && len(c.Nodes) == 0:
			for _, sc := range p.Scenes {
				if sc.Address == c.Address {
					scenes = append(scenes, sc)
				}
			}
		case c.Element == "bus" && c.Action == diff.Update:
			more, poll, ok := busChange(a.cur, p, c)
			if !ok {
				refused = append(refused, fmt.Sprintf("%s %s (%s): on air a bus takes new scenes at the end of its list and a new input_poll_ms, nothing else", c.Address, c.Action, c.Reason))
				continue
			}
			if len(more) > 0 {
				add[c.Address] = more
			}
			if poll >= 0 {
				polls[c.Address] = poll
			}
		default:
			refused = append(refused, fmt.Sprintf("%s %s (%s)", c.Address, c.Action, c.Reason))
			continue
		}
		names = append(names, c.Address)
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("refused, nothing changed: these changes need the show restarted (on air, onair changes and adds scenes and changes input_poll_ms, nothing else): %s: %w", strings.Join(refused, "; "), control.ErrConflict)
	}
	if len(names) > 0 {
		js, err := plan.Marshal(p)
		if err != nil {
			return nil, err
		}
		if err := a.show.ApplyLive(show.LiveChange{Scenes: scenes, AddScenes: add, InputPollMs: polls}, js); err != nil {
			return nil, err
		}
		a.cur = p
	}
	return applied{Applied: append([]string{}, names...)}, nil
}

// busChange reads a bus's change: when all that changed is its
// compositor's scenes (only at the end of the list), the scene on air at
// start (nothing to do on air: a cut does that) and input_poll_ms, it
// returns the scenes added and the new input_poll_ms (-1: unchanged).
func busChange(old, new *plan.Plan, c diff.Change) (more []string, pollMs int, ok bool) {
	pollMs = -1
	if len(c.Nodes) != 1 || c.Nodes[0].Kind != "compositor" || c.Nodes[0].Action != diff.Update {
		return nil, -1, false
	}
	for _, at := range c.Nodes[0].Attrs {
		switch at.Name {
		case "scenes":
			was, now := compositorParam(old, c.Address, "scenes"), compositorParam(new, c.Address, "scenes")
			a, b := stringList(was), stringList(now)
			if len(b) <= len(a) || !slices.Equal(b[:len(a)], a) {
				return nil, -1, false
			}
			more = b[len(a):]
		case "scene":
		case "input_poll_ms":
			n, isInt := compositorParam(new, c.Address, "input_poll_ms").(int)
			if f, isFloat := compositorParam(new, c.Address, "input_poll_ms").(float64); isFloat {
				n, isInt = int(f), true
			}
			if !isInt {
				return nil, -1, false
			}
			pollMs = n
		default:
			return nil, -1, false
		}
	}
	return more, pollMs, true
}

// compositorParam is param name of bus's compositor in p (nil: none).
func compositorParam(p *plan.Plan, bus, name string) any {
	for _, n := range p.Nodes {
		if n.Address == bus && n.Kind == "compositor" {
			return n.Params[name]
		}
	}
	return nil
}

// stringList is a list param's value as strings.
func stringList(v any) []string {
	var out []string
	switch v := v.(type) {
	case []string:
		out = append(out, v...)
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}
