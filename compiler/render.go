package compiler

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/onairhq/onair/compiler/plan"
)

// WriteText renders a plan for people: counts by kind, loops and their
// sources, threads, fused hops and estimates against the profile (with the
// estimates' notes); then, unless summary, the detail folded by group
// (consecutive groups of the same shape print once, with their count).
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

	pf("\nEvent loops: %d\n", len(p.Loops))
	for _, l := range p.Loops {
		pf("  %-10s %4d sources, %4d nodes", l.Name, len(l.Sources), len(l.Nodes))
		if len(l.Sources) > 0 {
			pf(": %s", listSome(l.Sources, 4))
		}
		pf("\n")
	}
	pf("\nThreads: %d (%d nodes on threads of their own + %d event loops)\n", threads+len(p.Loops), threads, len(p.Loops))

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

	e := p.Estimates
	pf("\nEstimates")
	if p.Profile != "" {
		pf(" against %s", p.Profile)
	}
	pf(":\n")
	pf("  %-20s %d threads, %d event loops, %d nodes, %d edges\n", "size", e.Threads, e.EventLoops, e.Nodes, e.Edges)
	pf("  %-20s %s\n", "vram", gib(float64(e.VRAMBytes)))
	pf("  %-20s %s\n", "pinned host memory", gib(float64(e.PinnedHostBytes)))
	pf("  %-20s %.2f GB/s\n", "pcie upload", float64(e.PCIeBytesPerSec)/1e9)
	pf("  %-20s %g frames/s (1080p-equivalent)\n", "nvdec", e.NVDECFramesPerSec)
	if len(e.Budgets) > 0 {
		pf("\n  %-20s %14s %14s  %s\n", "budget", "used", "limit", "")
		for _, b := range e.Budgets {
			verdict := "ok"
			if !b.OK {
				verdict = "EXCEEDED"
			}
			pct := ""
			if b.Limit > 0 {
				pct = fmt.Sprintf(" (%.0f %%)", 100*b.Used/b.Limit)
			}
			pf("  %-20s %14s %14s  %s%s\n", b.Name, fmtAmount(b.Used, b.Unit), fmtAmount(b.Limit, b.Unit), verdict, pct)
		}
	}
	for _, n := range e.Notes {
		pf("  note: %s\n", n)
	}
	if summary {
		return bw.err
	}

	pf("\nGroups in start order (groups of the same shape folded):\n")
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
	shape := func(g plan.Group) string {
		var sb strings.Builder
		for _, i := range byGroup[g.Name] {
			n := p.Nodes[i]
			sb.WriteString(n.Kind)
			fmt.Fprint(&sb, n.Params["bus"], n.Params["mode"])
			if n.Placement.Thread {
				sb.WriteString("@t")
			}
			sb.WriteString(n.Format)
			for _, ed := range out[n.ID] {
				if nodeGroup[ed.To] == g.Name {
					sb.WriteString(">" + kindOfID(ed.To))
				}
			}
			sb.WriteByte(';')
		}
		return sb.String()
	}
	for i := 0; i < len(p.Groups); {
		g := p.Groups[i]
		s := shape(g)
		j := i + 1
		for j < len(p.Groups) && shape(p.Groups[j]) == s {
			j++
		}
		if j-i > 1 {
			pf("\n%s … %s (%d groups alike, first shown; start order %d–%d)\n", g.Name, p.Groups[j-1].Name, j-i, g.Order, p.Groups[j-1].Order)
		} else {
			pf("\n%s (start order %d)\n", g.Name, g.Order)
		}
		if len(g.DependsOn) > 0 {
			pf("  after:  %s\n", listSome(g.DependsOn, 6))
		}
		pf("  ready:  %s\n", g.Readiness)
		for _, ni := range byGroup[g.Name] {
			n := p.Nodes[ni]
			where := "thread"
			if !n.Placement.Thread {
				where = n.Placement.Loop
			}
			pf("  %-12s %-20s %-9s", where, n.Kind, n.Format)
			if ps := paramText(n.Params); ps != "" {
				pf(" %s", ps)
			}
			pf("\n")
			var tos []string
			for _, ed := range out[n.ID] {
				if nodeGroup[ed.To] != g.Name {
					tos = append(tos, fmt.Sprintf("%s (%d)", ed.To, ed.Capacity))
				}
			}
			if len(tos) > 0 {
				pf("  %-12s → %s\n", "", listSome(tos, 4))
			}
		}
		i = j
	}
	return bw.err
}

func paramText(m map[string]any) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		switch k {
		case "path", "socket", "args", "scenes", "colour", "size", "frame_rate", "format":
			continue
		}
		v := m[k]
		switch x := v.(type) {
		case []string:
			v = "[" + strings.Join(x, ",") + "]"
		case []any:
			s := make([]string, len(x))
			for i := range x {
				s[i] = fmt.Sprint(x[i])
			}
			v = "[" + strings.Join(s, ",") + "]"
		}
		parts = append(parts, fmt.Sprintf("%s=%v", k, v))
	}
	return strings.Join(parts, " ")
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

// WriteDot renders the plan's graph for Graphviz: event loops as clusters,
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
// as subgraphs, formats and capacities on the edges.
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
