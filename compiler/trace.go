package compiler

import (
	"fmt"
	"io"
	"strings"
)

// WriteGraphText prints the graph as `onair plan -trace PASS` shows it: one
// line per node with its kind, group and placement, then its out edges.
func WriteGraphText(w io.Writer, g *Graph) {
	for _, n := range g.Nodes() {
		where := ""
		switch {
		case n.Placement.Thread:
			where = " [thread]"
		case n.Placement.Loop != "":
			where = " [" + n.Placement.Loop + "]"
		}
		fmt.Fprintf(w, "%s (%s, %s)%s\n", n.ID, n.Kind, n.Format, where)
		var outs []string
		for _, e := range g.Out(n.ID) {
			outs = append(outs, fmt.Sprintf("%s[%d %s]", e.To, e.Capacity, e.Format))
		}
		if len(outs) > 0 {
			fmt.Fprintf(w, "    -> %s\n", strings.Join(outs, ", "))
		}
	}
}
