package show

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	gomaps "maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/showerr"
)

// Snapshots are the multiviewer's tiles: a small JPEG of a bus or a source,
// taken only while someone watches it. GET /snapshot/NAME?fps=N marks
// NAME watched for SnapshotWatchNs at N snapshots a second (the fastest
// asked for while it is watched; 5 unless asked); while it is, the bus's
// compositor (for a source, the first compositor that takes it) hands a
// frame to the snapshot goroutine at most that often, without waiting: a
// tick costs one atomic load when nobody watches, and one retain and a
// channel send when a snapshot is due. The goroutine brings the frame to
// host memory, scales it to SnapshotWidth, converts its levels and colour
// to JFIF and encodes it.
const (
	SnapshotWidth   = 320
	SnapshotWatchNs = 3_000_000_000 // a request keeps a tile live this long
	SnapshotQuality = 75
)

type snapSlot struct {
	name       string
	watchUntil atomic.Int64 // monotonic ns
	lastTaken  atomic.Int64 // when the last snapshot was due (the schedule's, not the tick's)
	intervalNs atomic.Int64 // between snapshots, while watched
	busy       atomic.Bool  // a frame is on its way to the snapshot goroutine

	mu     sync.Mutex
	jpeg   []byte
	drawn  int64 // when the picture in jpeg was drawn (monotonic ns)
	unused bool  // a source no bus takes: it never has a picture
}

type snapJob struct {
	slot    *snapSlot
	drawn   int64 // when the compositor drew (or took) the picture
	host    func() (*frame.Frame, func(), error)
	release func()
}

type snapshots struct {
	clock func() int64
	any   atomic.Int64 // the latest watchUntil of any slot
	// slots holds every bus's and source's, swapped whole when a source
	// is added on air (addSource): read it through slotMap.
	slots atomic.Pointer[map[string]*snapSlot]

	mu    sync.Mutex
	owner map[string]string // source → the bus whose compositor snapshots it

	start sync.Once
	work  chan snapJob
	stop  chan struct{}
	done  chan struct{}
}

func newSnapshots(b *State) *snapshots {
	s := &snapshots{clock: b.opts.Clock, owner: map[string]string{},
		work: make(chan snapJob, 8), stop: make(chan struct{}), done: make(chan struct{})}
	slots := map[string]*snapSlot{}
	s.slots.Store(&slots)
	for a := range b.buses {
		slots[a] = &snapSlot{name: a}
	}
	for a := range b.sourceMap() {
		sl := &snapSlot{name: a, unused: true}
		for bus := range b.buses {
			if b.feeds(a, bus) {
				sl.unused = false
				break
			}
		}
		slots[a] = sl
	}
	return s
}

// claim makes bus the one that snapshots source, unless another bus does.
// slotMap is every bus's and source's slot, as on air now.
func (s *snapshots) slotMap() map[string]*snapSlot { return *s.slots.Load() }

// addSource gives a source added on air its slot (ApplyLive, one at a
// time).
func (s *snapshots) addSource(a string) {
	slots := gomaps.Clone(s.slotMap())
	slots[a] = &snapSlot{name: a}
	s.slots.Store(&slots)
}

func (s *snapshots) claim(source, bus string) {
	s.mu.Lock()
	if _, ok := s.owner[source]; !ok {
		s.owner[source] = bus
	}
	s.mu.Unlock()
}

func (s *snapshots) owns(source, bus string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owner[source] == bus
}

// due reports whether name's snapshot should be taken at a tick at now of
// a bus ticking every period ns, and if so marks it busy: the caller must
// then send a job (or clear busy). Snapshots keep to a schedule, one an
// interval, each taken at the first tick within half a period of its time:
// ticks come with jitter, and a snapshot asked for at the bus's own rate
// (the Program monitor at 25 a second on a 25 fps show) due a whole
// interval after the last tick taken would miss every tick that came a
// little early, halving the rate and adding to the monitor's lag
// (BenchmarkMonitorLag); a rate that is no divisor of the bus's (10 on
// 25) averages out to the rate asked. A schedule fallen behind (no tick
// for a while) starts again from now.
func (s *snapshots) due(name string, now, period int64) *snapSlot {
	sl := s.slotMap()[name]
	if sl == nil || sl.watchUntil.Load() < now {
		return nil
	}
	last, iv := sl.lastTaken.Load(), sl.intervalNs.Load()
	if now < last+iv-period/2 || !sl.busy.CompareAndSwap(false, true) {
		return nil
	}
	sl.lastTaken.Store(max(last+iv, now-period/2))
	return sl
}

// send hands a job to the snapshot goroutine without waiting.
func (s *snapshots) send(j snapJob) {
	select {
	case s.work <- j:
	default:
		j.release()
		j.slot.busy.Store(false)
	}
}

func (s *snapshots) run() {
	defer close(s.done)
	var img *image.YCbCr
	var buf bytes.Buffer
	for {
		select {
		case <-s.stop:
			return
		case j := <-s.work:
			img = s.take(j, img, &buf)
		}
	}
}

// take converts and encodes one job's picture into its slot. A panic in it
// (a broken picture) is logged with its stack and counted, the slot keeps
// its last snapshot, and the goroutine goes on with the next job.
func (s *snapshots) take(j snapJob, img *image.YCbCr, buf *bytes.Buffer) (out *image.YCbCr) {
	out = img
	var done func()
	defer func() {
		if p := recover(); p != nil {
			panics.From("the snapshot of "+j.slot.name, p, nil).Log(nil)
		}
		if done != nil {
			done()
		}
		j.release()
		j.slot.busy.Store(false)
	}()
	host, d, err := j.host()
	if err != nil {
		return out
	}
	done = d
	out = ToJFIF(host, SnapshotWidth, img)
	buf.Reset()
	if jpeg.Encode(buf, out, &jpeg.Options{Quality: SnapshotQuality}) == nil {
		j.slot.mu.Lock()
		j.slot.jpeg = append(j.slot.jpeg[:0], buf.Bytes()...)
		j.slot.drawn = j.drawn
		j.slot.mu.Unlock()
	}
	return out
}

// close stops the snapshot goroutine and lets go of the frames still
// waiting for it. The compositors have stopped.
func (s *snapshots) close() {
	started := true
	s.start.Do(func() { started = false })
	if started {
		close(s.stop)
		<-s.done
	}
	for {
		select {
		case j := <-s.work:
			j.release()
		default:
			return
		}
	}
}

// Snapshot marks a bus or source (with or without its "bus." or "source."
// prefix) as watched at fps snapshots a second, and returns its latest
// snapshot and its age.
func (b *State) Snapshot(name string, fps int) ([]byte, time.Duration, error) {
	s := b.snaps
	sl := s.slotMap()[name]
	if sl == nil {
		sl = s.slotMap()[withPrefix("bus.", name)]
	}
	if sl == nil {
		sl = s.slotMap()[withPrefix("source.", name)]
	}
	if sl == nil {
		var names []string
		for a := range s.slotMap() {
			names = append(names, a)
		}
		return nil, 0, fmt.Errorf("no bus or source %q in this show (try one of: %s): %w", name, strings.Join(sortedStrings(names), ", "), ErrNotFound)
	}
	if sl.unused {
		return nil, 0, fmt.Errorf("%s feeds no bus, so it is not running and has no picture: %w", sl.name, showerr.ErrUnused)
	}
	s.start.Do(func() { go s.run() })
	now := s.clock()
	until := now + SnapshotWatchNs
	iv := int64(1_000_000_000 / max(1, fps)) // control bounds fps
	// The fastest rate asked for while the tile is watched; a slower ask
	// takes over once the faster one's watch has lapsed.
	if sl.watchUntil.Load() < now || iv < sl.intervalNs.Load() {
		sl.intervalNs.Store(iv)
	}
	sl.watchUntil.Store(until)
	for {
		cur := s.any.Load()
		if cur >= until || s.any.CompareAndSwap(cur, until) {
			break
		}
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.jpeg == nil {
		return nil, 0, fmt.Errorf("%s: the first snapshot is being taken; ask again in a moment: %w", sl.name, showerr.ErrNotReady)
	}
	return append([]byte(nil), sl.jpeg...), time.Duration(max(0, now-sl.drawn)), nil
}

func sortedStrings(s []string) []string {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return sortedKeys(m)
}

// snapshot is the compositor's hook after a tick: the bus's picture and
// its inputs' frames to the snapshot goroutine when someone watches them.
func (c *compositor[F]) snapshot(out F, now int64) {
	s := c.b.snaps
	if s == nil || s.any.Load() < now || c.toHost == nil {
		return
	}
	if sl := s.due(c.bus.Address, now, c.bus.period); sl != nil {
		c.snapJob(sl, out, now)
	}
	for src, i := range c.inputOf {
		if c.cur[i] == zero[F]() || !s.owns(src, c.bus.Address) {
			continue
		}
		if sl := s.due(src, now, c.bus.period); sl != nil {
			c.snapJob(sl, c.cur[i], now)
		}
	}
}

func (c *compositor[F]) snapJob(sl *snapSlot, f F, now int64) {
	f.Retain()
	toHost := c.toHost
	c.b.snaps.send(snapJob{slot: sl, drawn: now, host: func() (*frame.Frame, func(), error) { return toHost(f) }, release: f.Release})
}

// ToJFIF converts an NV12 or P010 frame to a JFIF picture for the JPEG
// encoder: full-range YCbCr with the BT.601 matrix, as JPEG viewers
// decode it, from the frame's own range and matrix (its colour tags;
// untagged frames are taken as BT.709 limited range). maxW > 0 scales the
// picture down (nearest sample) to at most maxW wide. dst is reused when it
// has the right size. Primaries and transfer are left as they are.
func ToJFIF(f *frame.Frame, maxW int, dst *image.YCbCr) *image.YCbCr {
	w, h := f.Width, f.Height
	if maxW > 0 && w > maxW {
		w, h = maxW, max(2, (f.Height*maxW/f.Width)&^1)
	}
	r := image.Rect(0, 0, w, h)
	if dst == nil || dst.Rect != r || dst.SubsampleRatio != image.YCbCrSubsampleRatio420 {
		dst = image.NewYCbCr(r, image.YCbCrSubsampleRatio420)
	}
	cv := newLevels(f.Colour, f.Format == frame.P010)
	sample := func(plane, x, y int) float32 {
		if f.Format == frame.P010 {
			p := f.Data[plane][y*f.Pitch[plane]+2*x:]
			return float32(uint16(p[0])|uint16(p[1])<<8) / 256 // the 8-bit scale, two bits of fraction
		}
		return float32(f.Data[plane][y*f.Pitch[plane]+x])
	}
	var ys [4]float32
	var rs, gs, bs [4]float32
	for cy := 0; cy < h/2; cy++ {
		for cx := 0; cx < w/2; cx++ {
			// The 2x2 block of output pixels at (2cx, 2cy) and the source
			// chroma sample under its centre.
			sx := ((2*cx + 1) * f.Width / w) / 2
			sy := ((2*cy + 1) * f.Height / h) / 2
			sx = min(sx, f.Width/2-1)
			sy = min(sy, f.Height/2-1)
			cb := sample(1, 2*sx, sy)
			cr := sample(1, 2*sx+1, sy)
			var ra, ga, ba float32
			for i := 0; i < 4; i++ {
				ox, oy := 2*cx+i%2, 2*cy+i/2
				lx, ly := min(ox*f.Width/w, f.Width-1), min(oy*f.Height/h, f.Height-1)
				rs[i], gs[i], bs[i] = cv.rgb(sample(0, lx, ly), cb, cr)
				ys[i] = 0.299*rs[i] + 0.587*gs[i] + 0.114*bs[i]
				ra, ga, ba = ra+rs[i], ga+gs[i], ba+bs[i]
				dst.Y[oy*dst.YStride+ox] = clampByte(ys[i] * 255)
			}
			ra, ga, ba = ra/4, ga/4, ba/4
			ya := 0.299*ra + 0.587*ga + 0.114*ba
			dst.Cb[cy*dst.CStride+cx] = clampByte(128 + (ba-ya)/1.772*255)
			dst.Cr[cy*dst.CStride+cx] = clampByte(128 + (ra-ya)/1.402*255)
		}
	}
	return dst
}

// levels turns a frame's YCbCr samples (on an 8-bit scale) into R'G'B' in
// [0, 1].
type levels struct {
	yOff, yScale, cScale float32
	crR, cbG, crG, cbB   float32
}

func newLevels(c frame.Colour, tenBit bool) levels {
	kr, kb := float32(0.2126), float32(0.0722) // BT.709, also for untagged frames
	switch c.Matrix {
	case "bt601":
		kr, kb = 0.299, 0.114
	case "bt2020nc":
		kr, kb = 0.2627, 0.0593
	}
	kg := 1 - kr - kb
	l := levels{yOff: 16, yScale: 1 / 219.0, cScale: 1 / 224.0}
	if c.Range == "full" {
		l.yOff, l.yScale, l.cScale = 0, 1/255.0, 1/255.0
		if tenBit { // 10-bit full range spans 0..1023: 255.75 on the 8-bit scale
			l.yScale, l.cScale = 1/255.75, 1/255.75
		}
	}
	l.crR = 2 * (1 - kr)
	l.cbB = 2 * (1 - kb)
	l.cbG = -kb * l.cbB / kg
	l.crG = -kr * l.crR / kg
	return l
}

func (l levels) rgb(y, cb, cr float32) (r, g, b float32) {
	yy := (y - l.yOff) * l.yScale
	pb := (cb - 128) * l.cScale
	pr := (cr - 128) * l.cScale
	return clamp01(yy + l.crR*pr), clamp01(yy + l.cbG*pb + l.crG*pr), clamp01(yy + l.cbB*pb)
}

func clamp01(v float32) float32 {
	if v < 0 {
		return 0
	}
	if v > 1 {
		return 1
	}
	return v
}

func clampByte(v float32) uint8 {
	v += 0.5
	if v <= 0 {
		return 0
	}
	if v >= 255 {
		return 255
	}
	return uint8(v)
}
