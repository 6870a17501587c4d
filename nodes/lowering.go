package nodes

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
