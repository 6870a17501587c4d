// Package nodes is the one registry of node kinds: every kind the compiler
// can place in a plan and the runtime can run declares here, in one place,
// its name, documentation, parameters (types, defaults, ranges, whether they
// may change on a running show), traits (blocking or loop-driven, roles,
// memory domain, formats taken and emitted), readiness condition, how a
// show element lowers to it (element.go: Lower over the compiler's neutral
// Element, From) and what the compiler's fusions make of it (Fuses), and
// which of its params change on a running show (live.go: CheckLive,
// Update). It also declares the shape of a backend's lowering and its
// constructor table (lowering.go: Lowering.Lower, Constructors.Add), which
// each backend's files fill in from init, a kind's chain beside its
// constructor.
//
// The compiler's checks read traits, never kind names; `onair nodes` prints
// the reference from these declarations. Which backend runs which kind is
// the backend table's (internal/backends): each backend's package holds its
// constructors, typed over its frame type.
//
// This package must never import lang/, compiler/ or runtime/: it is data.
package nodes

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/onairhq/onair/internal/value"
)

// Role is one thing a node does in a graph. A kind may have several.
type Role uint16

// The roles a kind may declare. Rules match on these, never on kind names.
const (
	Source     Role = 1 << iota // originates frames (a file reader, a socket, a generator)
	Routing                     // offers several streams; each must have exactly one consumer
	Decoder                     // turns packets into frames
	Uploader                    // moves host frames to device memory
	Importer                    // maps foreign GPU buffers into the device context
	Pacer                       // releases frames on the show's clock
	FanOut                      // copies one stream to many consumers (the only role that may broadcast)
	Compositor                  // draws a bus from its inputs
	Sink                        // ends a chain (outputs)
)

var roleNames = []struct {
	r    Role
	name string
}{
	{Source, "source"}, {Routing, "routing"}, {Decoder, "decoder"}, {Uploader, "uploader"},
	{Importer, "importer"}, {Pacer, "pacer"}, {FanOut, "fan_out"}, {Compositor, "compositor"},
	{Sink, "sink"},
}

// Has reports whether every role in q is in r.
func (r Role) Has(q Role) bool { return r&q == q && q != 0 }

// String lists the roles, "source+pacer".
func (r Role) String() string {
	var parts []string
	for _, rn := range roleNames {
		if r&rn.r != 0 {
			parts = append(parts, rn.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

// Domain is where a node's output frames live.
type Domain string

const (
	Host   Domain = "host"
	Device Domain = "device"
)

// Formats a kind may take or emit on its edges: the plan's streams
// (value.Stream).
const (
	FormatPackets = string(value.StreamPackets) // compressed or raw packets from a demuxer or reader
	FormatNV12    = string(value.StreamNV12)
	FormatP010    = string(value.StreamP010)
	FormatDMABUF  = string(value.StreamDMABUF) // foreign GPU buffers handed over a socket
	FormatAny     = "*"                        // whatever frame format the node before emits (nv12 or p010)
)

// ParamType is the type of a parameter value.
type ParamType string

const (
	Int      ParamType = "int"
	String   ParamType = "string"
	Bool     ParamType = "bool"
	Enum     ParamType = "enum"
	Strings  ParamType = "list(string)"
	Rational ParamType = "rational" // "1/120000"
)

// Param declares one parameter of a kind.
type Param struct {
	Name    string
	Type    ParamType
	Default any      // int, string, bool or []string; nil = no default (optional)
	Min     *int     // Int: inclusive bounds
	Max     *int     //
	Enum    []string // Enum: the allowed values
	Doc     string
	// Live is true when the value can change on a running show without
	// re-creating the node (a diff may update it in place): the kind's
	// live hook on the running show applies it (nodes/show).
	Live bool
	// Canvas names the canvas settings that feed this param (the kind's
	// Lower reads them: a compositor's input_poll_ms is canvas
	// input_poll_ms on a Program bus, aux_input_poll_ms on an AUX one): a
	// live param's settings change on air through it (LiveCanvas), and a
	// test holds each setting's type, default and range to the param's.
	Canvas []string
}

// Traits are what the compiler's rules read.
type Traits struct {
	// Blocking nodes need a thread of their own; the rest are driven by an
	// event loop.
	Blocking bool
	// LoopWhen lists parameter values under which a blocking kind runs on
	// an event loop after all (an AUX compositor is paced by the default
	// loop; a Program compositor has its own thread).
	LoopWhen map[string][]string
	// Pool, when set, is a pool of threads the kind's nodes share when
	// their params match PoolWhen (they run on an event loop and hand
	// their blocking work to the pool): the plan counts the pool's
	// threads once, at most Pool.Threads, not a thread per node.
	Pool     *Pool
	PoolWhen map[string][]string
	Roles    Role
	Domain   Domain   // where the frames it emits live; "" for sinks
	Takes    []string // formats accepted on input edges; empty for sources
	Emits    []string // formats emitted on output edges; empty for sinks
	// MaxOutputs bounds the output edges: 1 for an ordinary node, more for
	// fan-outs and routing nodes, 0 for sinks.
	MaxOutputs int
}

// Pool is a pool of threads shared by several nodes.
type Pool struct {
	Name    string
	Threads int // at most this many (fewer on a machine with fewer cores)
}

// Kind is one node kind.
type Kind struct {
	Name   string
	Doc    string
	Params []Param
	Traits Traits
	// Readiness says what "ready" means for a node of this kind; a group is
	// ready when every node in it is. Empty means the kind cannot state it,
	// which the compiler's readiness check reports.
	Readiness string
	// Exclusive lists sets of parameters of which at most one may be set.
	Exclusive [][]string
	// Lower is how a show element becomes a node of this kind: the params
	// it takes from the element (nil: it takes none, or only fusions make
	// it).
	Lower Lower
	// From names the show elements every backend lowers to this kind:
	// "bus", "output.record". A source's kinds are its backend's chain
	// (Lowering.Chains).
	From []string
	// Fuses is what fusion passes may make of a node of this kind.
	Fuses Fuses
}

// Param returns the named parameter's declaration.
func (k *Kind) Param(name string) (*Param, bool) {
	for i := range k.Params {
		if k.Params[i].Name == name {
			return &k.Params[i], true
		}
	}
	return nil, false
}

// RunsOnThread reports whether a node of this kind with these parameters
// needs a thread of its own.
func (k *Kind) RunsOnThread(params map[string]any) bool {
	return k.Traits.Blocking && !k.Matches(params, k.Traits.LoopWhen)
}

// InPool returns the pool a node of this kind with these params hands its
// blocking work to, or nil.
func (k *Kind) InPool(params map[string]any) *Pool {
	if k.Traits.Pool == nil || k.RunsOnThread(params) {
		return nil
	}
	if len(k.Traits.PoolWhen) == 0 || k.Matches(params, k.Traits.PoolWhen) {
		return k.Traits.Pool
	}
	return nil
}

// Matches reports whether a node of this kind with these params (or,
// for those not given, the declared defaults) has, for some param that
// when lists, one of the values listed.
func (k *Kind) Matches(params map[string]any, when map[string][]string) bool {
	for name, values := range when {
		v, ok := params[name]
		if !ok {
			if p, found := k.Param(name); found {
				v = p.Default
			}
		}
		if s, isStr := v.(string); isStr && contains(values, s) {
			return true
		}
	}
	return false
}

// Has reports whether the kind has every role in r.
func (k *Kind) Has(r Role) bool { return k.Traits.Roles.Has(r) }

var (
	mu    sync.RWMutex
	kinds = map[string]*Kind{}
	from  = map[string]*Kind{} // show element → the kind it lowers to (Kind.From)
)

// Register adds a kind to the registry. It panics when the name is taken or
// the declaration is inconsistent: registration happens in init, and a
// broken declaration is a programming error.
func Register(k *Kind) {
	if err := k.validate(); err != nil {
		panic("nodes: " + err.Error())
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := kinds[k.Name]; dup {
		panic("nodes: kind registered twice: " + k.Name)
	}
	for _, e := range k.From {
		if other, dup := from[e]; dup {
			panic("nodes: " + e + " lowers to both " + other.Name + " and " + k.Name)
		}
		from[e] = k
	}
	kinds[k.Name] = k
}

// Lookup returns the kind registered under name.
func Lookup(name string) (*Kind, bool) {
	mu.RLock()
	defer mu.RUnlock()
	k, ok := kinds[name]
	return k, ok
}

// All returns every registered kind, sorted by name.
func All() []*Kind {
	mu.RLock()
	out := make([]*Kind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k)
	}
	mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (k *Kind) validate() error {
	if k.Name == "" {
		return fmt.Errorf("a kind needs a name")
	}
	if k.Doc == "" {
		return fmt.Errorf("kind %s needs a doc", k.Name)
	}
	seen := map[string]bool{}
	for _, p := range k.Params {
		if seen[p.Name] {
			return fmt.Errorf("kind %s: parameter %s declared twice", k.Name, p.Name)
		}
		seen[p.Name] = true
		if p.Default != nil {
			if err := p.Check(p.Default); err != nil {
				return fmt.Errorf("kind %s: default of %s: %v", k.Name, p.Name, err)
			}
		}
		if p.Type == Enum && len(p.Enum) == 0 {
			return fmt.Errorf("kind %s: enum parameter %s lists no values", k.Name, p.Name)
		}
	}
	for _, set := range k.Exclusive {
		for _, n := range set {
			if !seen[n] {
				return fmt.Errorf("kind %s: exclusive set names unknown parameter %s", k.Name, n)
			}
		}
	}
	return nil
}

// Check reports whether v is a valid value for the parameter.
func (p *Param) Check(v any) error {
	switch p.Type {
	case Int:
		n, ok := asInt(v)
		if !ok {
			return fmt.Errorf("%s must be a whole number, got %v", p.Name, v)
		}
		if p.Min != nil && n < *p.Min || p.Max != nil && n > *p.Max {
			return fmt.Errorf("%s must be in %s, got %d", p.Name, p.rangeText(), n)
		}
	case Bool:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s must be true or false, got %v", p.Name, v)
		}
	case String, Rational:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s must be a string, got %v", p.Name, v)
		}
		if p.Type == Rational && !isRational(s) {
			return fmt.Errorf("%s must be a positive whole number or fraction such as \"30\" or \"1/120000\", got %q", p.Name, s)
		}
	case Enum:
		s, ok := v.(string)
		if !ok || !contains(p.Enum, s) {
			return fmt.Errorf("%s must be one of %s, got %v", p.Name, strings.Join(p.Enum, " | "), v)
		}
	case Strings:
		if _, ok := v.([]string); !ok {
			return fmt.Errorf("%s must be a list of strings, got %v", p.Name, v)
		}
	default:
		return fmt.Errorf("%s has unknown type %q", p.Name, p.Type)
	}
	return nil
}

// Validate checks a node's parameters against the kind: unknown names,
// types, ranges and exclusive sets.
func (k *Kind) Validate(params map[string]any) error {
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p, ok := k.Param(n)
		if !ok {
			return fmt.Errorf("%s has no parameter %q", k.Name, n)
		}
		if err := p.Check(params[n]); err != nil {
			return fmt.Errorf("%s: %v", k.Name, err)
		}
	}
	for _, set := range k.Exclusive {
		var got []string
		for _, n := range set {
			if _, ok := params[n]; ok {
				got = append(got, n)
			}
		}
		if len(got) > 1 {
			return fmt.Errorf("%s takes %s, never both", k.Name, strings.Join(got, " or "))
		}
	}
	return nil
}

func (p *Param) rangeText() string {
	switch {
	case p.Min != nil && p.Max != nil:
		return fmt.Sprintf("%d..%d", *p.Min, *p.Max)
	case p.Min != nil:
		return fmt.Sprintf(">= %d", *p.Min)
	case p.Max != nil:
		return fmt.Sprintf("<= %d", *p.Max)
	}
	return ""
}

// isRational accepts "N" and "N/D" with N, D positive.
func isRational(s string) bool {
	num, den, frac := strings.Cut(s, "/")
	pos := func(x string) bool {
		n, err := strconv.ParseInt(x, 10, 64)
		return err == nil && n > 0
	}
	return pos(num) && (!frac || pos(den))
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		if n == float64(int(n)) {
			return int(n), true
		}
	}
	return 0, false
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
