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
	"github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/nodes/show"
)

func init() {
	register(&command{
		name: "apply",
		summary: "Change a running show to an edited show file without going off air: prints the diff against the plan on air, " +
			"then applies it when every change can be made live (scenes and their layers, scenes added to a bus, the params " +
			"the registry marks live); anything else is refused whole.",
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
	if !r.Changed() {
		return 0
	}
	// What onair lint would say of the new show, before it goes on air.
	if n := lintBeforeApply(fs.Arg(0), vf.options(), compiler.Options{ToolVersion: version, Profile: cur.Profile, Target: target.Lowering}, stderr); n > 0 {
		fmt.Fprintf(stderr, "onair apply: refused, nothing sent: the show has %s (above); fix them and apply again\n", plural(n, "lint error"))
		return 1
	}
	if *dry {
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
var liveCanvas = map[string]bool{"canvas.input_poll_ms": true, "canvas.aux_input_poll_ms": true, "canvas.import_ttl_ms": true}

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
	ch, names, refused := liveChange(a.cur, p)
	if len(refused) > 0 {
		return nil, fmt.Errorf("refused, nothing changed: these changes need the show restarted (on air, onair changes and adds scenes, and changes input_poll_ms, import_ttl_ms and a preview's interval_ms and quality, nothing else): %s: %w", strings.Join(refused, "; "), control.ErrConflict)
	}
	if len(names) > 0 {
		js, err := plan.Marshal(p)
		if err != nil {
			return nil, err
		}
		if err := a.show.ApplyLive(ch, js); err != nil {
			return nil, err
		}
		a.cur = p
	}
	return applied{Applied: append([]string{}, names...)}, nil
}

// liveChange is what of the difference between the plan on air (cur) and
// p can be made on air, the elements it changes (names), and what cannot
// (refused: each needs the show restarted).
func liveChange(cur, p *plan.Plan) (ch show.LiveChange, names, refused []string) {
	r := diff.Diff(cur, p)
	var scenes []plan.Scene
	for _, sa := range r.Show {
		if !liveCanvas[sa.Name] {
			refused = append(refused, sa.Name+" changed")
		}
	}
	// refuse says what an element of c's kind takes on air, if not c.
	refuse := func(c diff.Change, takes string) {
		refused = append(refused, fmt.Sprintf("%s %s (%s): on air a %s, nothing else", c.Address, c.Action, c.Reason, takes))
	}
	add := map[string][]string{}
	polls := map[string]int{}
	previews := map[string]show.PreviewSettings{}
	ttls := map[string]int{}
	for _, c := range r.Changes {
		switch {
		case c.Element == "scene" && (c.Action == diff.Update || c.Action == diff.Create) && len(c.Nodes) == 0:
			for _, sc := range p.Scenes {
				if sc.Address == c.Address {
					scenes = append(scenes, sc)
				}
			}
		case c.Element == "bus" && c.Action == diff.Update:
			more, poll, ok := busChange(cur, p, c)
			if !ok {
				refuse(c, "bus takes new scenes at the end of its list and a new input_poll_ms")
				continue
			}
			if len(more) > 0 {
				add[c.Address] = more
			}
			if poll >= 0 {
				polls[c.Address] = poll
			}
		case c.Element == "source" && c.Action == diff.Update:
			ms, ok := importTTLChange(p, c)
			if !ok {
				refuse(c, "browser source takes a new import_ttl_ms")
				continue
			}
			ttls[c.Address] = ms
		case c.Element == "output" && c.Action == diff.Update:
			ps, ok := previewChange(p, c)
			if !ok {
				refuse(c, "preview output takes a new interval_ms and quality")
				continue
			}
			previews[c.Address] = ps
		default:
			refused = append(refused, fmt.Sprintf("%s %s (%s)", c.Address, c.Action, c.Reason))
			continue
		}
		names = append(names, c.Address)
	}
	ch = show.LiveChange{Scenes: scenes, AddScenes: add, InputPollMs: polls, Previews: previews, ImportTTLMs: ttls}
	return ch, names, refused
}

// updatedNode is c's one node change when it updates a node of kind in
// place, with nothing else changed in the element.
func updatedNode(c diff.Change, kind string) (diff.NodeChange, bool) {
	if len(c.Nodes) != 1 || c.Nodes[0].Kind != kind || c.Nodes[0].Action != diff.Update {
		return diff.NodeChange{}, false
	}
	return c.Nodes[0], true
}

// nodeParams are the params of the node of kind that element addr has in
// p (value.Settings hold whole numbers as int and lists as []string, read
// from JSON too).
func nodeParams(p *plan.Plan, addr, kind string) value.Settings {
	for _, n := range p.Nodes {
		if n.Address == addr && n.Kind == kind {
			return n.Params
		}
	}
	return nil
}

// busChange reads a bus's change: when all that changed is its
// compositor's scenes (only at the end of the list), the scene on air at
// start (nothing to do on air: a cut does that) and input_poll_ms, it
// returns the scenes added and the new input_poll_ms (-1: unchanged).
func busChange(old, new *plan.Plan, c diff.Change) (more []string, pollMs int, ok bool) {
	nc, ok := updatedNode(c, "compositor")
	if !ok {
		return nil, -1, false
	}
	was, now := nodeParams(old, c.Address, "compositor"), nodeParams(new, c.Address, "compositor")
	pollMs = -1
	for _, at := range nc.Attrs {
		switch at.Name {
		case "scenes":
			a, b := was.Strings("scenes"), now.Strings("scenes")
			if len(b) <= len(a) || !slices.Equal(b[:len(a)], a) {
				return nil, -1, false
			}
			more = b[len(a):]
		case "scene":
		case "input_poll_ms":
			n, isInt := now["input_poll_ms"].(int)
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

// previewChange reads an output's change: when all that changed is a
// preview's interval_ms and quality, it returns them.
func previewChange(new *plan.Plan, c diff.Change) (show.PreviewSettings, bool) {
	var ps show.PreviewSettings
	nc, ok := updatedNode(c, "output_preview")
	if !ok {
		return ps, false
	}
	prm := nodeParams(new, c.Address, "output_preview")
	for _, at := range nc.Attrs {
		v, ok := prm[at.Name].(int)
		switch {
		case !ok:
			return ps, false
		case at.Name == "interval_ms":
			ps.IntervalMs = v
		case at.Name == "quality":
			ps.Quality = v
		default:
			return ps, false
		}
	}
	return ps, true
}

// importTTLChange reads a source's change: when all that changed is its
// gpu_import's import_ttl_ms, it returns the new one.
func importTTLChange(new *plan.Plan, c diff.Change) (int, bool) {
	nc, ok := updatedNode(c, "gpu_import")
	if !ok {
		return 0, false
	}
	for _, at := range nc.Attrs {
		if at.Name != "import_ttl_ms" {
			return 0, false
		}
	}
	ms, ok := nodeParams(new, c.Address, "gpu_import")["import_ttl_ms"].(int)
	return ms, ok
}
