package cuda

/*
#cgo CFLAGS: -I${SRCDIR}
#include "driver.h"
#include "compositor.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/playout"
)

// Rect is a rectangle in pixels: X, Y of its top-left corner, W×H.
type Rect struct{ X, Y, W, H int }

// Empty reports whether r has no area.
func (r Rect) Empty() bool { return r.W <= 0 || r.H <= 0 }

func (r Rect) even() bool { return r.X&1 == 0 && r.Y&1 == 0 && r.W&1 == 0 && r.H&1 == 0 }

func (r Rect) contains(o Rect) bool {
	return o.X >= r.X && o.Y >= r.Y && o.X+o.W <= r.X+r.W && o.Y+o.H <= r.Y+r.H
}

// Layer is one picture on the canvas, its geometry already placed: the
// backend computes frame.Place(frame size, crop, rect, fit) and copies the
// Placement's Crop, Dst and Pad here, so the GPU draws exactly what the CPU
// compositor would. All rectangles are even (Place makes them so).
type Layer struct {
	Frame   *Frame  // the picture; nil draws nothing
	Crop    Rect    // the source window read, inside the frame
	Dst     Rect    // the canvas rectangle the window is scaled onto
	Pad     Rect    // the layer's whole rectangle (contains Dst): Pad minus Dst is painted black; zero: Dst
	Opacity float64 // 1 opaque, 0 invisible; in between blends over what is below (a Frame with alpha is keyed: frame/keying.go)
	Z       int     // higher draws later (on top); equal Z keeps slice order
}

// MaxLayers is the most visible layers one draw takes (the kernel
// argument's table; compositor.h's ONAIR_MAX_LAYERS).
const MaxLayers = 48

// The two must agree, and the largest draw's argument must fit the 4352
// bytes of kernel parameters PTX ISA 7.0 allows (ptxas refuses more): a
// negative array size fails the build.
var (
	_ [MaxLayers - C.ONAIR_MAX_LAYERS]struct{}
	_ [C.ONAIR_MAX_LAYERS - MaxLayers]struct{}
	_ [maxKernelParams - C.sizeof_onair_draw48_args]struct{}
)

// maxKernelParams is the most bytes of parameters a kernel takes at PTX
// ISA 7.0 (the Makefile's PTX_ISA).
const maxKernelParams = 4352

// Compositor draws layers onto a canvas frame with one kernel launch per
// draw, and renders fades and wipes, on the stream it was made for. Its
// output is the CPU compositor's, byte for byte. It caches the filter
// tables of the scaling geometries it has seen (in device memory), so a
// steady show draws without allocating. Give each bus its own compositor
// and stream; a Compositor is not safe for concurrent use.
type Compositor struct {
	stream *Stream
	mod    *module
	plan   planner
	tables *deviceTables
	waits  *[MaxLayers + 2]C.onair_h // C memory: the events a launch waits on
	targs  *C.onair_transition_args  // C memory
}

// NewCompositor returns a compositor drawing on s. It loads the kernels
// (the driver compiles the embedded PTX for this GPU on first use).
func NewCompositor(s *Stream) (*Compositor, error) {
	m, err := s.ctx.kernels()
	if err != nil {
		return nil, err
	}
	c := &Compositor{stream: s, mod: m, tables: &deviceTables{s: s, mem: map[DevicePtr]*DeviceMemory{}}}
	c.plan.store = c.tables
	c.plan.args = (*C.onair_draw48_args)(C.calloc(1, C.sizeof_onair_draw48_args))
	c.targs = (*C.onair_transition_args)(C.calloc(1, C.sizeof_onair_transition_args))
	c.waits = (*[MaxLayers + 2]C.onair_h)(C.calloc(MaxLayers+2, C.size_t(unsafe.Sizeof(C.onair_h(nil)))))
	return c, nil
}

// Stream is the compositor's stream.
func (c *Compositor) Stream() *Stream { return c.stream }

// Close waits for the compositor's work and frees its tables.
func (c *Compositor) Close() error {
	err := c.stream.Synchronize()
	for _, m := range c.tables.mem {
		err = errors.Join(err, m.Free())
	}
	c.tables.mem = nil
	if c.waits != nil {
		C.free(unsafe.Pointer(c.waits))
		C.free(unsafe.Pointer(c.plan.args))
		C.free(unsafe.Pointer(c.targs))
		c.waits, c.plan.args, c.targs = nil, nil, nil
	}
	return err
}

// Draw queues painting dst black and drawing the layers on it in z order:
// one kernel launch, after the stream waits (on the GPU) for every layer's
// frame to be written; dst is marked written after it. Every layer's frame
// must have dst's format and none may be dst. dst's metadata is left to the
// caller, and the caller keeps its references to the layers' frames
// (release them with ReleaseAfter(c.Stream())).
func (c *Compositor) Draw(dst *Frame, layers []Layer) error {
	n, err := c.plan.plan(dst, layers)
	if err != nil {
		return err
	}
	nw := 0
	for i, f := range c.plan.frames {
		seen := false
		for _, g := range c.plan.frames[:i] {
			seen = seen || g == f
		}
		if !seen {
			c.waits[nw] = f.written.h
			nw++
		}
	}
	keyed := false
	for i := 0; i < n; i++ {
		keyed = keyed || c.plan.args.layer[i].key != 0
	}
	fn := [2]C.onair_h{c.mod.draw48, c.mod.drawk48}
	switch {
	case n <= 4:
		fn = [2]C.onair_h{c.mod.draw4, c.mod.drawk4}
	case n <= 16:
		fn = [2]C.onair_h{c.mod.draw16, c.mod.drawk16}
	}
	if keyed {
		return c.launch(fn[1], dst, nw, unsafe.Pointer(c.plan.args))
	}
	return c.launch(fn[0], dst, nw, unsafe.Pointer(c.plan.args))
}

// launch waits for nw events, runs fn over dst (a thread per 2x2 block)
// with the argument at arg, and marks dst written.
func (c *Compositor) launch(fn C.onair_h, dst *Frame, nw int, arg unsafe.Pointer) error {
	const bx, by = 32, 8
	gx := (dst.Width/2 + bx - 1) / bx
	gy := (dst.Height/2 + by - 1) / by
	s := c.stream
	rc := C.onair_launch(s.ctx.d.t, s.ctx.h, s.h, &c.waits[0], C.int(nw), fn, C.uint(gx), C.uint(gy), bx, by, arg, dst.written.h)
	return launchErr(s.ctx.d, rc)
}

// launchErr splits onair_launch's result into the step that failed and
// its CUresult.
func launchErr(d *driver, rc C.onair_res) error {
	if rc <= 0 {
		return d.err("cuLaunchKernel", rc)
	}
	return d.err(launchSteps[rc/C.ONAIR_STEP], rc%C.ONAIR_STEP)
}

// launchSteps names the calls of onair_launch's steps.
var launchSteps = [...]string{"cuLaunchKernel", "cuStreamWaitEvent", "cuLaunchKernel", "cuEventRecord"}

// Transition queues rendering the transition t from `from` to `to` at
// progress (clamped to [0,1]) into dst, as cpu.Transition.Apply does: a
// cut, or a fade at weight 0 or 1, copies a frame; fades and wipes run one
// kernel. All three frames must share format and size; dst may not be
// either input. dst takes to's metadata from progress one half on, from's
// before; it is marked written.
func (c *Compositor) Transition(dst, from, to *Frame, t playout.Kind, progress float64) error {
	act, err := planTransition(c.targs, dst, from, to, t, progress)
	if err != nil {
		return err
	}
	s := c.stream
	switch act {
	case copyFrom, copyTo:
		src := from
		if act == copyTo {
			src = to
		}
		if err := src.WaitWritten(s); err != nil {
			return err
		}
		for p := 0; p < 2; p++ {
			if err := s.Copy2D(DeviceRegion(dst.Plane[p], dst.Pitch), DeviceRegion(src.Plane[p], src.Pitch), dst.RowBytes(), dst.Height>>p); err != nil {
				return err
			}
		}
		if err := dst.MarkWritten(s); err != nil {
			return err
		}
	default:
		c.waits[0], c.waits[1] = from.written.h, to.written.h
		if err := c.launch(c.mod.transition, dst, 2, unsafe.Pointer(c.targs)); err != nil {
			return err
		}
	}
	transitionMeta(dst, from, to, act, progress)
	return nil
}

type transitionAction int

const (
	runKernel transitionAction = iota
	copyFrom
	copyTo
)

// planTransition decides what a transition does (cpu.Transition.Apply's
// cases) and fills the kernel argument when a kernel runs.
func planTransition(a *C.onair_transition_args, dst, from, to *Frame, t playout.Kind, progress float64) (transitionAction, error) {
	for _, f := range [2]*Frame{from, to} {
		if f.Format != dst.Format || f.Width != dst.Width || f.Height != dst.Height {
			return 0, fmt.Errorf("%v: input is %v %dx%d but the bus is %v %dx%d", t, f.Format, f.Width, f.Height, dst.Format, dst.Width, dst.Height)
		}
		if f == dst {
			return 0, fmt.Errorf("%v: the output frame is also an input", t)
		}
	}
	if err := checkCanvas(dst); err != nil {
		return 0, err
	}
	if math.IsNaN(progress) {
		progress = 0
	}
	progress = min(max(progress, 0), 1)
	*a = C.onair_transition_args{
		dst_y: C.onair_u64(dst.Plane[0]), dst_c: C.onair_u64(dst.Plane[1]),
		from_y: C.onair_u64(from.Plane[0]), from_c: C.onair_u64(from.Plane[1]),
		to_y: C.onair_u64(to.Plane[0]), to_c: C.onair_u64(to.Plane[1]),
		dst_pitch: C.int(dst.Pitch), from_pitch: C.int(from.Pitch), to_pitch: C.int(to.Pitch),
		width: C.int(dst.Width), height: C.int(dst.Height),
		shift: C.int(shiftOf(dst.Format)), bps: C.int(dst.Format.BytesPerSample()),
	}
	switch t {
	case playout.Cut:
		return copyTo, nil
	case playout.Fade:
		switch al := int(math.Round(progress * 256)); al {
		case 0:
			return copyFrom, nil
		case 256:
			return copyTo, nil
		default:
			a.mode, a.alpha = 1, C.int(al)
		}
	case playout.Wipe:
		a.mode, a.edge = 2, C.int(int(math.Round(progress*float64(dst.Width)))&^1)
	default:
		return 0, fmt.Errorf("cuda: unknown transition %v", t)
	}
	return runKernel, nil
}

// transitionMeta stamps dst's metadata as cpu.Transition.Apply does.
func transitionMeta(dst, from, to *Frame, act transitionAction, progress float64) {
	switch {
	case act == copyTo:
		dst.CopyMeta(to)
	case act == copyFrom:
		dst.CopyMeta(from)
	case progress >= 0.5: // NaN compares false: from
		dst.CopyMeta(to)
	default:
		dst.CopyMeta(from)
	}
}

func shiftOf(f frame.Format) int {
	if f == frame.P010 {
		return 6
	}
	return 0
}

// checkCanvas refuses a frame the kernels cannot write: they store two
// samples at a time, so rows and planes must be 4-byte aligned.
func checkCanvas(dst *Frame) error {
	if err := checkSize(dst.Format, dst.Width, dst.Height); err != nil {
		return err
	}
	if dst.Pitch%4 != 0 || dst.Plane[0]%4 != 0 || dst.Plane[1]%4 != 0 {
		return fmt.Errorf("cuda: a canvas needs 4-byte aligned rows (pitch %d, planes %#x, %#x): allocate it with NewFrame or a FramePool", dst.Pitch, dst.Plane[0], dst.Plane[1])
	}
	return nil
}

// maxTables bounds the filter tables a compositor keeps; the least
// recently used geometry goes first, its memory reused.
const maxTables = 64

// tableStore is where a planner's filter tables live: device memory for a
// Compositor, host memory for the tests that run the kernel code on the CPU.
type tableStore interface {
	alloc(words int) (DevicePtr, error)
	write(p DevicePtr, words []int32) error
	free(p DevicePtr) error
}

type table struct {
	ptr  DevicePtr
	cap  int // words
	used uint64
}

// planner turns a draw's layers into the kernel argument, sorting them by
// z, placing them and finding their filter tables. It allocates nothing
// once its tables are built.
type planner struct {
	args   *C.onair_draw48_args // C memory: cgo may pass it (Go memory holding Go pointers it may not)
	order  []int
	frames []*Frame // the layers' frames, in table order
	tables map[filterKey]*table
	spare  []*table
	draws  uint64
	store  tableStore
}

func (p *planner) plan(dst *Frame, layers []Layer) (int, error) {
	if err := checkCanvas(dst); err != nil {
		return 0, err
	}
	p.draws++
	// Stable insertion sort of indices by Z, without allocating.
	p.order = p.order[:0]
	for i := range layers {
		p.order = append(p.order, i)
		for j := len(p.order) - 1; j > 0 && layers[p.order[j-1]].Z > layers[p.order[j]].Z; j-- {
			p.order[j-1], p.order[j] = p.order[j], p.order[j-1]
		}
	}
	by, bc := dst.Format.Black()
	p.args.canvas = C.onair_canvas{
		y: C.onair_u64(dst.Plane[0]), c: C.onair_u64(dst.Plane[1]), pitch: C.int(dst.Pitch),
		width: C.int(dst.Width), height: C.int(dst.Height),
		shift: C.int(shiftOf(dst.Format)), bps: C.int(dst.Format.BytesPerSample()),
		black_y: C.int(by), black_c: C.int(bc),
	}
	canvas := Rect{0, 0, dst.Width, dst.Height}
	p.frames = p.frames[:0]
	n := 0
	for _, i := range p.order {
		l := &layers[i]
		f := l.Frame
		if f == nil || !(l.Opacity > 0) { // NaN too
			continue
		}
		if f.Format != dst.Format {
			return 0, fmt.Errorf("layer %d: frame is %v but the canvas is %v: convert at the source", i, f.Format, dst.Format)
		}
		if f == dst {
			return 0, fmt.Errorf("layer %d: the canvas is also a layer", i)
		}
		crop, d, pad := l.Crop, l.Dst, l.Pad
		if crop.Empty() || d.Empty() {
			continue
		}
		if pad == (Rect{}) {
			pad = d
		}
		if !crop.even() || !d.even() || !pad.even() {
			return 0, fmt.Errorf("layer %d: crop %v, dst %v and pad %v must be even (place layers with frame.Place)", i, crop, d, pad)
		}
		if !(Rect{0, 0, f.Width, f.Height}).contains(crop) {
			return 0, fmt.Errorf("layer %d: crop %v is outside the %dx%d frame", i, crop, f.Width, f.Height)
		}
		if !pad.contains(d) {
			return 0, fmt.Errorf("layer %d: dst %v is not inside pad %v", i, d, pad)
		}
		if f.Format == frame.P010 && f.Pitch%2 != 0 {
			return 0, fmt.Errorf("layer %d: a P010 frame with an odd pitch (%d)", i, f.Pitch)
		}
		if pad.X >= canvas.W || pad.Y >= canvas.H || pad.X+pad.W <= 0 || pad.Y+pad.H <= 0 {
			continue // off the canvas: draws nothing
		}
		// The kernel is given the part of the layer on the canvas, and its
		// filters hold those positions only (frame.NewFilterPart), so that
		// the tables cost what is drawn however large the layer, and every
		// coordinate fits the kernel's 32-bit ints. The window is counted
		// from its corner (wx0, wy0) of d; all of it is even.
		full := d
		wx0, wy0 := max(0, -d.X), max(0, -d.Y)
		wx1, wy1 := min(d.W, canvas.W-d.X), min(d.H, canvas.H-d.Y)
		d, pad = clip(d, canvas), clip(pad, canvas)
		if n == MaxLayers {
			return 0, fmt.Errorf("cuda: more than %d visible layers in one draw", MaxLayers)
		}
		alpha := int(math.Round(min(l.Opacity, 1) * 256))
		L := &p.args.layer[n]
		*L = C.onair_layer{
			y: C.onair_u64(f.Plane[0]), c: C.onair_u64(f.Plane[1]), pitch: C.int(f.Pitch),
			crop_x: C.int(crop.X), crop_y: C.int(crop.Y), // a copy's moves to the window below
			dst_x0: C.int(d.X), dst_y0: C.int(d.Y), dst_x1: C.int(d.X + d.W), dst_y1: C.int(d.Y + d.H),
			pad_x0: C.int(pad.X), pad_y0: C.int(pad.Y), pad_x1: C.int(pad.X + pad.W), pad_y1: C.int(pad.Y + pad.H),
			alpha: C.int(alpha),
		}
		if f.Alpha != 0 {
			// The kernel finds the alpha plane from the chroma plane: the
			// table has no room for another address (compositor.h).
			off := int64(f.Alpha) - int64(f.Plane[1])
			if off == 0 || off != int64(int32(off)) {
				return 0, fmt.Errorf("layer %d: its alpha plane at %#x is not within 2 GiB of its chroma plane at %#x (allocate keyed frames with NewAlphaFramePool)", i, f.Alpha, f.Plane[1])
			}
			L.key = C.int(off)
		}
		if f.Pitch%4 == 0 && f.Plane[0]%4 == 0 && f.Plane[1]%4 == 0 && f.Alpha%4 == 0 {
			L.wide = 1
		}
		switch {
		case d.Empty(): // only padding on the canvas
			L.copy = 1
		case crop.W == full.W && crop.H == full.H && (alpha >= 256 || f.Alpha != 0):
			L.copy = 1
			L.crop_x, L.crop_y = C.int(crop.X+wx0), C.int(crop.Y+wy0)
		default:
			t, err := p.table(filterKey{crop.W, crop.H, full.W, full.H, wx0, wx1, wy0, wy1})
			if err != nil {
				return 0, fmt.Errorf("layer %d: %w", i, err)
			}
			L.filters = C.onair_u64(t)
		}
		p.frames = append(p.frames, f)
		n++
	}
	p.args.canvas.layers = C.int(n)
	return n, nil
}

// clip is the part of r inside the canvas c (at the origin); empty when
// none is.
func clip(r, c Rect) Rect {
	x0, y0 := max(r.X, c.X), max(r.Y, c.Y)
	x1, y1 := min(r.X+r.W, c.X+c.W), min(r.Y+r.H, c.Y+c.H)
	if x1 <= x0 || y1 <= y0 {
		return Rect{}
	}
	return Rect{x0, y0, x1 - x0, y1 - y0}
}

// table returns the filter block of a geometry, building it on first use.
func (p *planner) table(k filterKey) (DevicePtr, error) {
	if t, ok := p.tables[k]; ok {
		t.used = p.draws
		return t.ptr, nil
	}
	if p.tables == nil {
		p.tables = map[filterKey]*table{}
	}
	words := k.block()
	if len(p.tables) >= maxTables {
		var oldK filterKey
		var old *table
		for k2, t := range p.tables {
			if old == nil || t.used < old.used {
				oldK, old = k2, t
			}
		}
		delete(p.tables, oldK)
		p.spare = append(p.spare, old)
	}
	var t *table
	for i, s := range p.spare {
		if s.cap >= len(words) {
			t = s
			p.spare = append(p.spare[:i], p.spare[i+1:]...)
			break
		}
	}
	if t == nil {
		if len(p.spare) >= maxTables { // none fits: let the smallest go
			small := 0
			for i, s := range p.spare {
				if s.cap < p.spare[small].cap {
					small = i
				}
			}
			if err := p.store.free(p.spare[small].ptr); err != nil {
				return 0, err
			}
			p.spare = append(p.spare[:small], p.spare[small+1:]...)
		}
		c := 1024
		for c < len(words) {
			c *= 2
		}
		ptr, err := p.store.alloc(c)
		if err != nil {
			return 0, err
		}
		t = &table{ptr: ptr, cap: c}
	}
	// A reused table is rewritten in stream order, after the draws that
	// read it.
	if err := p.store.write(t.ptr, words); err != nil {
		return 0, err
	}
	t.used = p.draws
	p.tables[k] = t
	return t.ptr, nil
}

// deviceTables keeps filter tables in device memory, written on the
// compositor's stream.
type deviceTables struct {
	s   *Stream
	mem map[DevicePtr]*DeviceMemory
}

func (d *deviceTables) alloc(words int) (DevicePtr, error) {
	m, err := d.s.ctx.Alloc(words * 4)
	if err != nil {
		return 0, err
	}
	d.mem[m.Ptr] = m
	return m.Ptr, nil
}

func (d *deviceTables) write(p DevicePtr, words []int32) error {
	return d.s.CopyHtoD(p, unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*4))
}

func (d *deviceTables) free(p DevicePtr) error {
	if err := d.s.Synchronize(); err != nil { // draws queued may still read it
		return err
	}
	m := d.mem[p]
	delete(d.mem, p)
	return m.Free()
}
