package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes the result as indented JSON, the form `onair diff -json`
// prints and scripts read.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteText writes the result for people, in Terraform's symbols:
// + create, ~ update in place, -/+ replace, - delete.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	label := func(s Side) string {
		if s.Label != "" {
			return s.Label
		}
		return s.Show
	}
	fmt.Fprintf(&b, "onair diff: %s → %s\n", label(r.Old), label(r.New))
	if !r.Changed() {
		b.WriteString("\nNo changes: the new show compiles to the plan on air.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("\nSymbols: + create, ~ update in place (live), -/+ replace (re-created), - delete\n")
	if len(r.Show) > 0 {
		b.WriteString("\nShow settings:\n")
		for _, a := range r.Show {
			fmt.Fprintf(&b, "  ~ %s: %s → %s\n", a.Name, value(a.Old), value(a.New))
		}
	}
	b.WriteString("\n")
	for _, c := range r.Changes {
		fmt.Fprintf(&b, "%-3s %s", c.Action.Symbol(), c.Address)
		if c.MovedFrom != "" {
			fmt.Fprintf(&b, " (moved from %s)", c.MovedFrom)
		}
		fmt.Fprintf(&b, ": %s", actionWords(c.Action))
		if c.Action == Replace && c.Attribute != "" {
			fmt.Fprintf(&b, ", %s forces replacement", c.Attribute)
		}
		fmt.Fprintf(&b, " [%s]\n", c.Reason)
		if c.Action == Update && c.Refused != "" {
			fmt.Fprintf(&b, "      ! needs a restart: %s\n", c.Refused)
		}
		for _, a := range c.Attrs {
			writeAttr(&b, "      ", a)
		}
		for _, n := range c.Nodes {
			fmt.Fprintf(&b, "    %-3s %s", n.Action.Symbol(), n.ID)
			if n.OldID != "" {
				fmt.Fprintf(&b, " (was %s)", n.OldID)
			}
			if n.Action != Create && n.Action != Delete {
				fmt.Fprintf(&b, " [%s]", n.Reason)
			}
			b.WriteString("\n")
			for _, a := range n.Attrs {
				writeAttr(&b, "          ", a)
			}
		}
	}
	if im := r.Impact; len(im.Glitches)+len(im.Restarts)+len(im.Starts)+len(im.Stops)+len(im.OutputsRestart) > 0 {
		b.WriteString("\nOn air:\n")
		for _, g := range im.Glitches {
			fmt.Fprintf(&b, "  ! %s glitches: %s\n", g.Bus, compact(g.Because))
		}
		list := func(what string, addrs []string) {
			if len(addrs) > 0 {
				fmt.Fprintf(&b, "  %s: %s\n", what, compact(addrs))
			}
		}
		list("sources restart", im.Restarts)
		list("sources start", im.Starts)
		list("sources stop", im.Stops)
		list("outputs restart", im.OutputsRestart)
		if len(im.Glitches) == 0 {
			b.WriteString("  no bus glitches\n")
		}
	}
	s := r.Summary
	fmt.Fprintf(&b, "\nPlan: %d to create, %d to update in place, %d to replace, %d to delete.\n", s.Create, s.Update, s.Replace, s.Delete)
	_, err := io.WriteString(w, b.String())
	return err
}

func actionWords(a Action) string {
	switch a {
	case Update:
		return "update in place"
	}
	return string(a)
}

func writeAttr(b *strings.Builder, indent string, a Attr) {
	note := ""
	switch {
	case a.Force:
		note = "  # forces replacement"
	case a.Live:
		note = "  # live"
	default:
		note = "  # needs a restart"
	}
	switch {
	case a.Old == nil:
		fmt.Fprintf(b, "%s+ %s = %s%s\n", indent, a.Name, value(a.New), note)
	case a.New == nil:
		fmt.Fprintf(b, "%s- %s = %s%s\n", indent, a.Name, value(a.Old), note)
	default:
		fmt.Fprintf(b, "%s~ %s: %s → %s%s\n", indent, a.Name, value(a.Old), value(a.New), note)
	}
}

func value(v any) string {
	if v == nil {
		return "(none)"
	}
	bs, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(bs)
}

// compact joins addresses, folding runs of consecutive count instances with
// the same remark into one: "source.vt[0..46] (replaced)". The input is in
// address order.
func compact(items []string) string {
	type run struct {
		name, rest string
		from, to   int
		plain      string // an item that does not fold
	}
	var runs []run
	for _, it := range items {
		addr, rest, _ := strings.Cut(it, " ")
		name, key := splitKey(addr)
		n, isNum := atoi(key)
		if !isNum {
			runs = append(runs, run{plain: it})
			continue
		}
		if k := len(runs) - 1; k >= 0 && runs[k].plain == "" && runs[k].name == name && runs[k].rest == rest && runs[k].to == n-1 {
			runs[k].to = n
			continue
		}
		runs = append(runs, run{name: name, rest: rest, from: n, to: n})
	}
	parts := make([]string, 0, len(runs))
	for _, r := range runs {
		switch {
		case r.plain != "":
			parts = append(parts, r.plain)
		default:
			s := fmt.Sprintf("%s[%d]", r.name, r.from)
			if r.to > r.from {
				s = fmt.Sprintf("%s[%d..%d]", r.name, r.from, r.to)
			}
			if r.rest != "" {
				s += " " + r.rest
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}
