package compiler

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/onairhq/onair/delivery"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/tsl5"
)

// WriteText renders a plan for people: counts by kind, loops and their
// sources, threads, fused hops and estimates against the profile (with the
// estimates' notes); then, unless summary, the detail by group.
// Consecutive groups of one shape (the same nodes wired the same way) print
// once, with their count; whatever else differs between them (a node's
// loop, a param's value, a consumer, a dependency) prints as * and is
// listed under "differs", value by value with the groups that have it;
// so are the params a node's line otherwise leaves out (path, size,
// frame rate, colour …) when they differ within the run.
func WriteText(w io.Writer, p *plan.Plan, summary bool) error {
	bw := &errWriter{w: w}
	pf := bw.printf
	pf("Plan for show %q: %s at %s fps, %s", p.Show, p.Size, p.FrameRate, p.Format)
	if p.Backend != "" {
		pf(", backend %s", p.Backend)
	}
	if p.Profile != "" {
		pf(", profile %s", p.Profile)
	}
	pf("\n\n")

	counts := map[string]int{}
	threads := 0
	for _, n := range p.Nodes {
		counts[n.Kind]++
		if n.Placement.Thread {
			threads++
		}
	}
	pf("Nodes: %d, edges: %d\n", len(p.Nodes), len(p.Edges))
	for _, k := range sortedKeys(counts) {
		pf("  %-22s %6d\n", k, counts[k])
	}

	backendLoops := 0 // decode loops: threads the backend runs, not event loops
	for _, l := range p.Loops {
		if l.Kind != "" {
			backendLoops++
		}
	}
	eventLoops := len(p.Loops) - backendLoops
	if backendLoops > 0 {
		pf("\nLoops: %d (%d event loops, %s)\n", len(p.Loops), eventLoops, countOf(backendLoops, "decode loop"))
	} else {
		pf("\nEvent loops: %d\n", len(p.Loops))
	}
	for _, l := range p.Loops {
		what := fmt.Sprintf("%4d sources, %4d nodes", len(l.Sources), len(l.Nodes))
		if l.Kind != "" {
			what = fmt.Sprintf("%4d decoders (%s)", len(l.Nodes), l.Kind)
		}
		pf("  %-10s %s", l.Name, what)
		if len(l.Sources) > 0 {
			pf(": %s", listSome(l.Sources, 4))
		}
		pf("\n")
	}
	loops := "event loops"
	if backendLoops > 0 {
		loops = "loops"
	}
	if pools := p.Estimates.Threads - threads - len(p.Loops); pools > 0 {
		pf("\nThreads: %d (%d nodes on threads of their own + %d %s + %d in shared pools)\n", p.Estimates.Threads, threads, len(p.Loops), loops, pools)
	} else {
		pf("\nThreads: %d (%d nodes on threads of their own + %d %s)\n", threads+len(p.Loops), threads, len(p.Loops), loops)
	}
	if n := p.Canvas.Int("go_procs"); n > 0 {
		pf("  go_procs = %d: Go's scheduler runs the show's goroutines and loops on %s (GOMAXPROCS in the environment wins)\n", n, countOf(n, "processor"))
	}

	pf("\nFused hops:")
	if len(p.Fusions) == 0 {
		pf(" none\n")
	} else {
		pf("\n")
		type agg struct {
			groups         int
			removed, added map[string]int
			reason         string
		}
		byPass := map[string]*agg{}
		var passOrder []string
		for _, f := range p.Fusions {
			a := byPass[f.Pass]
			if a == nil {
				a = &agg{removed: map[string]int{}, added: map[string]int{}, reason: f.Reason}
				byPass[f.Pass] = a
				passOrder = append(passOrder, f.Pass)
			}
			a.groups++
			for _, id := range f.Removed {
				a.removed[kindOfID(id)]++
			}
			for _, id := range f.Added {
				a.added[kindOfID(id)]++
			}
		}
		for _, name := range passOrder {
			a := byPass[name]
			pf("  %-20s %5d groups", name, a.groups)
			if len(a.removed) > 0 {
				pf(", removed %s", countList(a.removed))
			}
			if len(a.added) > 0 {
				pf(", added %s", countList(a.added))
			}
			pf("\n      e.g. %s\n", a.reason)
		}
	}

	if len(p.Tallies) > 0 {
		pf("\nTally out:\n")
		for _, t := range p.Tallies {
			d, err := tsl5.NewDestination(t.Transport, t.Address, t.Port)
			where := d.String()
			if err != nil {
				where = err.Error()
			}
			pf("  tally.%-14s %s %s, screen %d, a display per source\n", t.Name, t.Kind, where, t.Screen)
		}
	}

	e := p.Estimates
	pf("\nEstimates")
	if p.Profile != "" {
		pf(" against %s", p.Profile)
	}
	pf(":\n")
	pf("  %-20s %d threads, %d event loops, %d nodes, %d edges\n", "size", e.Threads, e.EventLoops, e.Nodes, e.Edges)
	if p.Backend == "cpu" { // nothing on a GPU: the host's cores and memory
		pf("  %-20s %.2f cores (the buses' drawing)\n", "cpu", e.CPUCores)
		pf("  %-20s %s\n", "host memory", gib(float64(e.HostBytes)))
	} else {
		pf("  %-20s %s\n", "vram", gib(float64(e.VRAMBytes)))
		pf("  %-20s %s\n", "pinned host memory", gib(float64(e.PinnedHostBytes)))
		pf("  %-20s %.2f GB/s\n", "pcie upload", float64(e.PCIeBytesPerSec)/1e9)
		pf("  %-20s %g frames/s (1080p-equivalent)\n", "nvdec", e.NVDECFramesPerSec)
	}
	if len(e.Encodes) > 0 {
		cores := "the profile gives no core count"
		if e.HostCores > 0 {
			cores = fmt.Sprintf("the machine's %d cores are %d %%", e.HostCores, 100*e.HostCores)
		}
		measured := 0
		for _, c := range e.Encodes {
			if c.Measured {
				measured++
			}
		}
		pf("  %-20s %.0f %% of one core, %d of %d output(s) measured, %d at once; %s\n", "encoding cpu", e.EncodeCorePercent, measured, len(e.Encodes), e.ConcurrentEncodes, cores)
		for _, c := range e.Encodes {
			cost := "not measured"
			if c.Measured {
				cost = fmt.Sprintf("%.0f %% of one core, %s", c.CorePercent, c.Basis)
			}
			pf("    %-18s %s %s %dx%d@%g: %s\n", c.Output, c.Encoder, c.Preset, c.Width, c.Height, c.FrameRate, cost)
		}
		pf("  %-20s %.0f %% of one core; with the encodes %.0f %%\n", "show cpu", e.ShowCorePercent, e.ShowCorePercent+e.EncodeCorePercent)
	}
	if len(e.Budgets) > 0 {
		pf("\n  %-20s %14s %14s  %s\n", "budget", "used", "limit", "")
		writeBudgets(bw, e.Budgets, "")
	}
	for _, g := range e.GPUs {
		pf("\n  gpu %d: %d sources, %d buses, vram %s, pcie upload %.2f GB/s, nvdec %g frames/s, peer copies in %g/s (%.2f GB/s)\n",
			g.GPU, g.Sources, g.Buses, gib(float64(g.VRAMBytes)), float64(g.PCIeBytesPerSec)/1e9, g.NVDECFramesPerSec, g.PeerCopiesPerSec, float64(g.PeerBytesPerSec)/1e9)
		writeBudgets(bw, g.Budgets, "  ")
	}
	for _, n := range e.Notes {
		pf("  note: %s\n", n)
	}
	if summary {
		return bw.err
	}

	pf("\nGroups in start order (consecutive groups of one shape folded; * marks what differs between them):\n")
	writeGroups(bw, p)
	return bw.err
}

// writeBudgets prints one line per budget: used, limit and the verdict.
func writeBudgets(bw *errWriter, bs []plan.Budget, indent string) {
	for _, b := range bs {
		verdict := "ok"
		if !b.OK {
			verdict = "EXCEEDED"
		}
		pct := ""
		if b.Limit > 0 {
			pct = fmt.Sprintf(" (%.0f %%)", 100*b.Used/b.Limit)
		}
		bw.printf("  %s%-20s %14s %14s  %s%s\n", indent, b.Name, fmtAmount(b.Used, b.Unit), fmtAmount(b.Limit, b.Unit), verdict, pct)
	}
}

// groupView is what the detail prints of one group, slot by slot, so that
// the groups of a folded run can be compared slot by slot.
type groupView struct {
	name  string
	after string
	ready string
	nodes []nodeView
}

type nodeView struct {
	kind, format string
	where        string            // the loop, or "thread"
	params       map[string]string // shown params, rendered
	hidden       map[string]string // params the detail leaves out unless they differ in a run, rendered
	tos          []string          // edges leaving the group, "to (capacity)"
	command      string            // an ffmpeg output's command line (ffmpegCommand)
}

// ffmpegCommand is the command line an output that runs ffmpeg starts,
// with the input options (which the bus's format, size, rate and colour
// decide) abridged: ffmpeg … -i pipe:0 ARGS. "" for other nodes.
func ffmpegCommand(n plan.Node) string {
	args, ok := n.Params["args"]
	if k, known := nodes.Lookup(n.Kind); !ok || !known || !k.Has(nodes.Sink) {
		return ""
	}
	var words []string
	switch a := args.(type) {
	case []string:
		words = append(words, a...)
	case []any:
		for _, w := range a {
			words = append(words, fmt.Sprint(w))
		}
	}
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t'\"$;&|<>()*?") {
			words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	sound := ""
	if slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(w, "1:a") }) {
		sound = ", its sound (48 kHz stereo float) on pipe:4" // media.FFmpegConfig.Audio
	}
	return fmt.Sprintf("ffmpeg [the bus's raw %s on pipe:0, its colour tags, -timecode of its first frame%s] %s", n.Format, sound, strings.Join(words, " "))
}

func viewGroups(p *plan.Plan) []groupView {
	byGroup := map[string][]int{}
	for i, n := range p.Nodes {
		byGroup[n.Group] = append(byGroup[n.Group], i)
	}
	out := map[string][]plan.Edge{}
	for _, ed := range p.Edges {
		out[ed.From] = append(out[ed.From], ed)
	}
	nodeGroup := make(map[string]string, len(p.Nodes))
	for _, n := range p.Nodes {
		nodeGroup[n.ID] = n.Group
	}
	views := make([]groupView, 0, len(p.Groups))
	for _, g := range p.Groups {
		v := groupView{name: g.Name, ready: g.Readiness}
		if len(g.DependsOn) > 0 {
			v.after = listSome(g.DependsOn, 6)
		}
		for _, ni := range byGroup[g.Name] {
			n := p.Nodes[ni]
			nv := nodeView{kind: n.Kind, format: string(n.Format), where: "thread", params: shownParams(n.Params), hidden: hiddenParams(n.Params), command: ffmpegCommand(n)}
			if !n.Placement.Thread {
				nv.where = n.Placement.Loop
			}
			if i, ok := n.Placement.OnGPU(); ok {
				nv.where += fmt.Sprintf(", gpu %d", i)
			}
			if u, ok := n.Params["url"].(string); ok { // a stream's credentials stay out of the text
				for _, m := range []map[string]string{nv.params, nv.hidden} {
					for k, v := range m {
						m[k] = delivery.Redact(v, u)
					}
				}
				nv.command = delivery.Redact(nv.command, u)
			}
			for _, ed := range out[n.ID] {
				switch {
				case ed.Cross != nil:
					nv.tos = append(nv.tos, fmt.Sprintf("%s (%d, peer copy gpu %d → gpu %d)", ed.To, ed.Capacity, ed.Cross.From, ed.Cross.To))
				case nodeGroup[ed.To] != g.Name:
					nv.tos = append(nv.tos, fmt.Sprintf("%s (%d)", ed.To, ed.Capacity))
				default:
					// An edge inside the group is part of its shape.
					nv.tos = append(nv.tos, "inside "+kindOfID(ed.To))
				}
			}
			v.nodes = append(v.nodes, nv)
		}
		views = append(views, v)
	}
	return views
}

// shape is what groups folded together share: the same nodes (kind,
// format, thread or loop, the same params shown) wired the same way inside
// the group. Everything else the detail prints (placement loop, param
// values, consumers, dependencies, readiness) may differ, and is then
// marked * and listed under "differs".
func (v groupView) shape() string {
	var sb strings.Builder
	for _, n := range v.nodes {
		sb.WriteString(n.kind + " " + n.format)
		if n.where == "thread" {
			sb.WriteString("@t")
		}
		for _, k := range sortedKeys(n.params) {
			sb.WriteString(" " + k)
		}
		for _, to := range n.tos {
			if strings.HasPrefix(to, "inside ") {
				sb.WriteString(">" + to)
			}
		}
		sb.WriteByte(';')
	}
	return sb.String()
}

// slot is one thing the detail prints about each group of a run.
type slot struct {
	label string
	vals  []string // per group
}

func (s slot) same() bool {
	for _, v := range s.vals[1:] {
		if v != s.vals[0] {
			return false
		}
	}
	return true
}

func writeGroups(bw *errWriter, p *plan.Plan) {
	pf := bw.printf
	views := viewGroups(p)
	for i := 0; i < len(views); {
		j := i + 1
		for j < len(views) && views[j].shape() == views[i].shape() {
			j++
		}
		run := views[i:j]
		first := run[0]
		var differs []slot
		vary := func(label string, get func(groupView) string) (string, bool) {
			s := slot{label: label}
			for _, v := range run {
				s.vals = append(s.vals, get(v))
			}
			if s.same() {
				return s.vals[0], false
			}
			differs = append(differs, s)
			return "*", true
		}
		if len(run) > 1 {
			pf("\n%s … %s (%d groups of one shape; start order %d–%d)\n", first.name, run[len(run)-1].name, len(run), p.Groups[i].Order, p.Groups[j-1].Order)
		} else {
			pf("\n%s (start order %d)\n", first.name, p.Groups[i].Order)
		}
		if after, _ := vary("after", func(v groupView) string { return v.after }); after != "" {
			pf("  after:  %s\n", after)
		}
		ready, _ := vary("ready", func(v groupView) string { return v.ready })
		pf("  ready:  %s\n", ready)
		for k, n := range first.nodes {
			where, _ := vary(n.kind+" runs on", func(v groupView) string { return v.nodes[k].where })
			pf("  %-12s %-20s %-9s", where, n.kind, n.format)
			// Params the detail leaves out (paths, sizes, colour …) print
			// as * when they differ within the run, and are listed under
			// differs like any other param.
			keys := map[string]bool{}
			for key := range n.params {
				keys[key] = true
			}
			for _, v := range run {
				for key := range v.nodes[k].hidden {
					if _, shown := n.params[key]; !shown {
						keys[key] = true
					}
				}
			}
			var ps []string
			for _, key := range sortedKeys(keys) {
				if _, shown := n.params[key]; shown {
					val, _ := vary(n.kind+" "+key, func(v groupView) string { return v.nodes[k].params[key] })
					ps = append(ps, key+"="+val)
					continue
				}
				if _, differs := vary(n.kind+" "+key, func(v groupView) string { return v.nodes[k].hidden[key] }); differs {
					ps = append(ps, key+"=*")
				}
			}
			if len(ps) > 0 {
				pf(" %s", strings.Join(ps, " "))
			}
			pf("\n")
			if n.command != "" && !slices.ContainsFunc(run, func(v groupView) bool { return v.nodes[k].command != n.command }) {
				pf("      runs: %s\n", n.command) // an ffmpeg output's command line (its args differ: listed under differs)
			}
			// Consumers every group of the run has print on the → line;
			// the others are listed under differs.
			common := map[string]int{}
			for _, v := range run {
				for _, to := range v.nodes[k].tos {
					common[to]++
				}
			}
			var tos []string
			for _, to := range n.tos {
				if common[to] == len(run) && !strings.HasPrefix(to, "inside ") {
					tos = append(tos, to)
				}
			}
			feeds := n.kind + " also feeds"
			if len(tos) == 0 {
				feeds = n.kind + " feeds"
			}
			_, extra := vary(feeds, func(v groupView) string {
				var xs []string
				for _, to := range v.nodes[k].tos {
					if common[to] != len(run) && !strings.HasPrefix(to, "inside ") {
						xs = append(xs, to)
					}
				}
				if len(xs) == 0 {
					return "nothing"
				}
				return listSome(xs, 4)
			})
			if extra {
				tos = append(tos, "*")
			}
			if len(tos) > 0 {
				pf("  %-12s → %s\n", "", listSome(tos, 4))
			}
		}
		if len(differs) > 0 {
			pf("  differs:\n")
			for _, d := range mergeSlots(differs) {
				pf("    %s: %s\n", d.label, valuesByGroup(d, run))
			}
		}
		i = j
	}
}

// mergeSlots joins slots that differ the same way across the run (the
// loop of every node of a source chain, say) into one line.
func mergeSlots(ss []slot) []slot {
	var out []slot
	at := map[string]int{}
	for _, s := range ss {
		key := strings.Join(s.vals, "\x00")
		if i, ok := at[key]; ok {
			out[i].label = mergeLabel(out[i].label, s.label)
			continue
		}
		at[key] = len(out)
		out = append(out, s)
	}
	return out
}

// mergeLabel joins "realtime runs on" and "one_to_many_nb runs on" into
// "realtime, one_to_many_nb runs on".
func mergeLabel(a, b string) string {
	for _, suffix := range []string{" runs on", " also feeds", " feeds"} {
		if strings.HasSuffix(a, suffix) && strings.HasSuffix(b, suffix) {
			return strings.TrimSuffix(a, suffix) + ", " + b
		}
	}
	return a + "; " + b
}

// valuesByGroup says which group has which value: "pacing_0 in
// source.a, source.c; pacing_1 in source.b", the values in the order they
// first appear, at most six of them.
func valuesByGroup(s slot, run []groupView) string {
	var order []string
	who := map[string][]string{}
	for i, v := range s.vals {
		if _, ok := who[v]; !ok {
			order = append(order, v)
		}
		who[v] = append(who[v], run[i].name)
	}
	var parts []string
	for i, v := range order {
		if i == 6 {
			parts = append(parts, fmt.Sprintf("… (%d more values)", len(order)-6))
			break
		}
		if v == "" {
			v = "none"
		}
		parts = append(parts, fmt.Sprintf("%s in %s", v, listSome(who[v], 3)))
	}
	return strings.Join(parts, "; ")
}

// hiddenParam says whether the detail leaves a param out of a node's
// line: the long or repetitive ones, unless they differ within a folded run.
func hiddenParam(k string) bool {
	switch k {
	case "path", "socket", "args", "scenes", "colour", "size", "frame_rate", "format":
		return true
	}
	return false
}

// shownParams renders the params the detail prints, by name.
func shownParams(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if !hiddenParam(k) {
			out[k] = paramValue(v)
		}
	}
	return out
}

// hiddenParams renders the params the detail leaves out, by name, so
// that a folded run can still say how they differ.
func hiddenParams(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if hiddenParam(k) {
			out[k] = paramValue(v)
		}
	}
	return out
}

func paramValue(v any) string {
	switch x := v.(type) {
	case []string:
		return "[" + strings.Join(x, ",") + "]"
	case []any:
		s := make([]string, len(x))
		for i := range x {
			s[i] = fmt.Sprint(x[i])
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	return fmt.Sprint(v)
}

func kindOfID(id string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		return id[i+1:]
	}
	return id
}

func countList(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func listSome(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:n], ", ") + fmt.Sprintf(", … (%d more)", len(xs)-n)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// WriteDot renders the plan's graph for Graphviz: event loops that run
// nodes as clusters (a loop with none is left out),
// nodes on threads of their own outside them, formats and capacities on
// the edges.
func WriteDot(w io.Writer, p *plan.Plan) error {
	bw := &errWriter{w: w}
	ids := graphIDs(p)
	bw.printf("digraph %s {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n  edge [fontsize=9];\n", strconv.Quote(p.Show))
	onLoop := map[string][]plan.Node{}
	for _, n := range p.Nodes {
		if n.Placement.Loop != "" {
			onLoop[n.Placement.Loop] = append(onLoop[n.Placement.Loop], n)
		}
	}
	for i, l := range p.Loops {
		if len(onLoop[l.Name]) == 0 {
			continue // a loop with no nodes would draw an empty box
		}
		bw.printf("  subgraph cluster_%d {\n    label=%s;\n    style=dashed;\n", i, strconv.Quote("loop "+l.Name))
		for _, n := range onLoop[l.Name] {
			bw.printf("    %s [label=%s];\n", ids[n.ID], strconv.Quote(n.ID))
		}
		bw.printf("  }\n")
	}
	for _, n := range p.Nodes {
		if n.Placement.Thread {
			bw.printf("  %s [label=%s, style=bold];\n", ids[n.ID], strconv.Quote(n.ID+"\n(thread)"))
		}
	}
	for _, e := range p.Edges {
		bw.printf("  %s -> %s [label=%s];\n", ids[e.From], ids[e.To], strconv.Quote(fmt.Sprintf("%s ×%d", e.Format, e.Capacity)))
	}
	bw.printf("}\n")
	return bw.err
}

// WriteMermaid renders the plan's graph as a Mermaid flowchart: event loops
// that run nodes as subgraphs, formats and capacities on the edges.
func WriteMermaid(w io.Writer, p *plan.Plan) error {
	bw := &errWriter{w: w}
	ids := graphIDs(p)
	bw.printf("flowchart LR\n")
	onLoop := map[string][]plan.Node{}
	for _, n := range p.Nodes {
		if n.Placement.Loop != "" {
			onLoop[n.Placement.Loop] = append(onLoop[n.Placement.Loop], n)
		}
	}
	label := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, "#quot;") + `"` }
	for _, l := range p.Loops {
		if len(onLoop[l.Name]) == 0 {
			continue
		}
		bw.printf("  subgraph loop_%s[%s]\n", strings.ReplaceAll(l.Name, "-", "_"), label("loop "+l.Name))
		for _, n := range onLoop[l.Name] {
			bw.printf("    %s[%s]\n", ids[n.ID], label(n.ID))
		}
		bw.printf("  end\n")
	}
	for _, n := range p.Nodes {
		if n.Placement.Thread {
			bw.printf("  %s[[%s]]\n", ids[n.ID], label(n.ID+" (thread)"))
		}
	}
	for _, e := range p.Edges {
		bw.printf("  %s -->|%s| %s\n", ids[e.From], label(fmt.Sprintf("%s ×%d", e.Format, e.Capacity)), ids[e.To])
	}
	return bw.err
}

func graphIDs(p *plan.Plan) map[string]string {
	ids := make(map[string]string, len(p.Nodes))
	for i, n := range p.Nodes {
		ids[n.ID] = "n" + strconv.Itoa(i)
	}
	return ids
}
