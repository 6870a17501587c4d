// Package backends is the one table of backends: for each, its name, what
// the compiler applies for it (its lowering: the chain each source kind
// becomes, where its frames live, its capacity profile), whether it can run
// here (its probe) and how it starts a plan. The compiler and the CLI ask
// this table; nothing else names a backend.
//
// Adding a backend is a package of its own under nodes/ (its frame type,
// pixel work and constructors behind nodes/show's interfaces, and its
// lowering) and one entry here.
//
// backends may import the backends' packages, nodes/ and plan/; it
// must never import lang/ or compiler/ (the compiler's tests import it).
package backends

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// Backend is one entry of the table.
type Backend struct {
	Name string
	Doc  string
	// Lowering is what the compiler applies for it.
	Lowering *nodes.Lowering
	// Probe says whether the backend can run shows on this machine: what it
	// found, or why not.
	Probe func() (found string, err error)
	// Device names the accelerator a show would run on ("NVIDIA H200"),
	// "" for none: the compiler checks a show that names no profile against
	// that device's (compiler.ProfileForDevice). Nil for a CPU backend.
	Device func() string
	// Start runs a plan compiled for it.
	Start func(ctx context.Context, p *plan.Plan, planJSON []byte, opts show.Options, log *slog.Logger) (show.Running, error)
	// Kinds lists the node kinds it runs.
	Kinds func() []string
}

// Runs reports whether the backend runs node kind k.
func (b *Backend) Runs(k string) bool {
	for _, x := range b.Kinds() {
		if x == k {
			return true
		}
	}
	return false
}

// All lists the backends in the order -backend auto tries them: the first
// usable one runs the show.
func All() []*Backend { return table }

// Names lists the backends' names, in table order.
func Names() []string {
	out := make([]string, len(table))
	for i, b := range table {
		out[i] = b.Name
	}
	return out
}

// Lookup returns the backend called name.
func Lookup(name string) (*Backend, error) {
	for _, b := range table {
		if b.Name == name {
			return b, nil
		}
	}
	return nil, fmt.Errorf("there is no backend %q: the backends are %s", name, strings.Join(Names(), ", "))
}

// Auto picks the first backend usable here and says why, naming what each
// backend before it lacked.
func Auto() (*Backend, string) {
	var passed []string
	for _, b := range table {
		found, err := b.Probe()
		if err == nil {
			why := "auto: " + found
			if len(passed) > 0 {
				why += "; " + strings.Join(passed, "; ")
			}
			return b, why
		}
		passed = append(passed, fmt.Sprintf("not %s: %v", b.Name, err))
	}
	return nil, "auto: no backend can run here: " + strings.Join(passed, "; ")
}

// RunsOn lists the backends that run node kind k, in table order (onair
// nodes prints it).
func RunsOn(k string) []string {
	var out []string
	for _, b := range table {
		if b.Runs(k) {
			out = append(out, b.Name)
		}
	}
	return out
}
