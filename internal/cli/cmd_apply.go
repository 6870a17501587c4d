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
	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/internal/backends"
	"github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/showerr"
)

func init() {
	register(&command{
		name: "apply",
		summary: "Change a running show to an edited show file without going off air: prints the diff against the plan on air, " +
			"then applies it when every change can be made live (scenes and their layers, scenes added to a bus, the params " +
			"the registry marks live); anything else is refused whole.",
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

// liveCanvas are the canvas settings whose change reaches the show only
// through node params that ApplyLive changes (each node change is checked
// below as any other): the kind and param each feeds, whose declared range
// is the setting's (the compiler's tests hold the two together).
var liveCanvas = map[string][2]string{
	"canvas.input_poll_ms":     {"compositor", "input_poll_ms"},
	"canvas.aux_input_poll_ms": {"compositor", "input_poll_ms"},
	"canvas.import_ttl_ms":     {"gpu_import", "import_ttl_ms"},
}

// checkLiveCanvas checks a live canvas setting's new value against the
// range of the param it feeds.
func checkLiveCanvas(name string, v any) error {
	feeds := liveCanvas[name]
	k, ok := nodes.Lookup(feeds[0])
	if !ok {
		return nil
	}
	prm, ok := k.Param(feeds[1])
	if !ok {
		return nil
	}
	if err := prm.Check(v); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	return nil
}

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
		return nil, fmt.Errorf("the plan sent: %v: %w", err, showerr.ErrInvalid)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := sameTarget(a.cur, p); err != nil {
		return nil, fmt.Errorf("refused, nothing changed: %v: %w", err, showerr.ErrConflict)
	}
	for _, name := range slices.Sorted(maps.Keys(liveCanvas)) {
		if v, ok := p.Canvas[strings.TrimPrefix(name, "canvas.")]; ok {
			if err := checkLiveCanvas(name, v); err != nil {
				return nil, fmt.Errorf("the plan sent: %v: %w", err, showerr.ErrInvalid)
			}
		}
	}
	ch, names, refused := liveChange(a.cur, p)
	if len(refused) > 0 {
		return nil, fmt.Errorf("refused, nothing changed: these changes need the show restarted (on air, onair changes, adds and renames scenes, and changes input_poll_ms, import_ttl_ms and a preview's interval_ms and quality, nothing else): %s: %w", strings.Join(refused, "; "), showerr.ErrConflict)
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
// (refused: each says what changed and why it needs the show restarted).
// Its cost is linear in the plans' sizes.
func liveChange(cur, p *plan.Plan) (ch show.LiveChange, names, refused []string) {
	r := diff.Diff(cur, p)
	var scenes []plan.Scene
	renames := map[string]string{}
	for _, sa := range r.Show {
		if _, live := liveCanvas[sa.Name]; !live {
			refused = append(refused, fmt.Sprintf("%s changed (%v → %v): a show or canvas setting", sa.Name, sa.Old, sa.New))
		}
	}
	// refuse says what an element of c's kind takes on air, if not c.
	refuse := func(c diff.Change, takes string) {
		refused = append(refused, fmt.Sprintf("%s %s (%s): on air a %s, nothing else", c.Address, c.Action, c.Reason, takes))
	}
	sceneOf := make(map[string]int, len(p.Scenes))
	for i, sc := range p.Scenes {
		sceneOf[sc.Address] = i
	}
	add := map[string][]string{}
	polls := map[string]int{}
	previews := map[string]show.PreviewSettings{}
	ttls := map[string]int{}
	for _, c := range r.Changes {
		if c.MovedFrom != "" && c.Element != "scene" {
			refused = append(refused, fmt.Sprintf("%s %s (%s from %s): on air only scenes are renamed", c.Address, c.Action, c.Reason, c.MovedFrom))
			continue
		}
		switch {
		case c.Element == "scene" && (c.Action == diff.Update || c.Action == diff.Create) && len(c.Nodes) == 0:
			if i, ok := sceneOf[c.Address]; ok {
				scenes = append(scenes, p.Scenes[i])
			}
			if c.MovedFrom != "" {
				renames[c.MovedFrom] = c.Address
			}
		case c.Element == "bus" && c.Action == diff.Update:
			bc, ok := busChange(cur, p, c)
			if !ok {
				refuse(c, "bus takes new scenes at the end of its list and a new input_poll_ms")
				continue
			}
			if len(bc.more) > 0 {
				add[c.Address] = bc.more
			}
			if bc.pollSet {
				polls[c.Address] = bc.pollMs
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
	if len(renames) > 0 {
		ch.RenameScenes = renames
	}
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

// busLive is what changes of a bus on air: scenes added at the end of
// its list, and its input_poll_ms when pollSet.
type busLive struct {
	more    []string
	pollMs  int
	pollSet bool
}

// busChange reads a bus's change: when all that changed is its
// compositor's scenes (only at the end of the list), the scene on air at
// start (nothing to do on air: a cut does that) and input_poll_ms, it
// returns what changes on air.
func busChange(old, new *plan.Plan, c diff.Change) (busLive, bool) {
	var bc busLive
	nc, ok := updatedNode(c, "compositor")
	if !ok {
		return bc, false
	}
	was, now := nodeParams(old, c.Address, "compositor"), nodeParams(new, c.Address, "compositor")
	for _, at := range nc.Attrs {
		switch at.Name {
		case "scenes":
			a, b := was.Strings("scenes"), now.Strings("scenes")
			if len(b) <= len(a) || !slices.Equal(b[:len(a)], a) {
				return bc, false
			}
			bc.more = b[len(a):]
		case "scene":
		case "input_poll_ms":
			n, isInt := now["input_poll_ms"].(int)
			if !isInt {
				return bc, false
			}
			bc.pollMs, bc.pollSet = n, true
		default:
			return bc, false
		}
	}
	return bc, true
}

// previewChange reads an output's change: when all that changed is a
// preview's interval_ms and quality, it returns both as the new plan has
// them.
func previewChange(new *plan.Plan, c diff.Change) (show.PreviewSettings, bool) {
	var ps show.PreviewSettings
	nc, ok := updatedNode(c, "output_preview")
	if !ok {
		return ps, false
	}
	for _, at := range nc.Attrs {
		if at.Name != "interval_ms" && at.Name != "quality" {
			return ps, false
		}
	}
	var prm struct {
		IntervalMs int `param:"interval_ms"`
		Quality    int `param:"quality"`
	}
	if err := nodes.Decode("output_preview", nodeParams(new, c.Address, "output_preview"), &prm); err != nil {
		return ps, false
	}
	return show.PreviewSettings{IntervalMs: prm.IntervalMs, Quality: prm.Quality}, true
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
