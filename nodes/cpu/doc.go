// Package cpu is onair's embedded CPU backend: the compositor that scales and
// blends layers onto a canvas (in bands on a few goroutines from 720p up),
// the transitions between two scenes' renders, and the node constructors
// that run a plan on host frames (backend.go), behind the interfaces of the
// shared show runtime in nodes/show.
//
// The pixel code (compositor, scale, transition, parallel) imports frame/
// and the standard library only; the constructors add nodes/show,
// nodes/media and runtime/. cpu must never import lang/ or compiler/ (it runs
// saved plans as well as fresh ones).
package cpu
