package nodes

import "runtime"

// Lowering is what the compiler applies for one backend: where its frames
// live, and the naive chain of node kinds each source kind becomes (before
// any fusion). A backend's package declares its lowering; the backend table
// hands it to the compiler, which reads it and never the backend's name.
type Lowering struct {
	// Backend is the backend's name, as plans and -backend spell it.
	Backend string
	// Domain is where the frames of its sources' chains and its compositors
	// live: Host for a backend that draws in host memory, Device for one
	// that draws on the GPU (a chain's own nodes may still say otherwise:
	// a raw reader on the GPU backend reads into host memory).
	Domain Domain
	// Profile is the capacity profile the compiler checks a show against
	// when the show names none.
	Profile string
	// Chains maps a source kind to its naive chain. A bus or output
	// lowers to the kind its From names on every backend; a backend that
	// cannot run one says so under the element's name ("output.hls":
	// Chain{Refuse: ...}), and the compiler reports it at the element.
	Chains map[string]Chain
	// added is the file each chain was added from (Lower), for the message
	// when a second file claims a source kind and for File.
	added map[string]string
}

// Chain is the naive chain of one source kind, in order from the reader to
// the fan-out, or the reason the backend cannot run the kind.
type Chain struct {
	Links []Link
	// Refuse, when set, says why the backend cannot run sources of the kind
	// and what to do instead; the compiler reports it at the source.
	Refuse string
}

// Link is one node of a chain: its kind, and the params the chain fixes
// (the rest the compiler derives from the source).
type Link struct {
	Kind   string
	Params map[string]any
	// Host marks a node of a Device lowering whose frames are in host
	// memory (a raw reader ahead of its upload).
	Host bool
}

// L is a Link with fixed params written as key, value pairs.
func L(kind string, kv ...any) Link {
	l := Link{Kind: kind}
	if len(kv) > 0 {
		l.Params = map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			l.Params[kv[i].(string)] = kv[i+1]
		}
	}
	return l
}

// Lower adds the chain a source kind lowers to on this backend. A
// backend's files call it from init, each beside the constructor of the
// chain's first node, so that a kind's backend code is one file. It panics
// when two files claim one source kind, or a link names a kind the registry
// does not declare: both are programming errors, found as the binary starts.
func (l *Lowering) Lower(source string, c Chain) {
	if l.Chains == nil {
		l.Chains, l.added = map[string]Chain{}, map[string]string{}
	}
	_, file, _, _ := runtime.Caller(1)
	if _, dup := l.Chains[source]; dup {
		panic("nodes: " + l.Backend + " lowers " + source + " twice: in " + l.added[source] + " and " + file)
	}
	for _, link := range c.Links {
		if _, ok := Lookup(link.Kind); !ok {
			panic("nodes: " + l.Backend + "'s chain for " + source + " names " + link.Kind + ", which no registry entry declares")
		}
	}
	l.Chains[source] = c
	l.added[source] = file
}

// File is the source file that added the chain of source (Lower), "" when
// none did.
func (l *Lowering) File(source string) string { return l.added[source] }

// Constructors is one backend's table of constructors by node kind (C is
// the backend's constructor type). The file that defines a constructor adds
// it from its init; the backend hands the assembled table to the runtime.
type Constructors[C any] map[string]C

// Add registers mk as the constructor of kind. It panics when the kind is
// not declared in the registry or already has a constructor here.
func (t Constructors[C]) Add(kind string, mk C) {
	if _, ok := Lookup(kind); !ok {
		panic("nodes: a constructor for " + kind + ", which no registry entry declares")
	}
	if _, dup := t[kind]; dup {
		panic("nodes: two constructors for " + kind)
	}
	t[kind] = mk
}
