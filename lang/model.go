package lang

import (
	"path/filepath"
	"strconv"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/delivery"
	"github.com/onairhq/onair/internal/value"
)

// This file is the typed model a show decodes into. It is the contract
// between lang/ and everything after it (compiler/, runtime/, the CLI):
// fields may be added, but a field's meaning never changes silently.
//
// Every block keeps the range it came from (DeclRange) and every attribute
// that was written keeps its own range (Attrs), so a check far down the
// compiler can still point at the line of the show file that caused it.

// Show is a whole, expanded show: every count and for_each already unrolled,
// every reference already resolved to a pointer.
type Show struct {
	Name      string
	Size      Size
	FrameRate Rational
	Format    PixelFormat // working format of the canvas
	Profile   string      // capacity profile name, "" when not set
	Colour    Colour      // the colour of every bus's pictures (show { colour { ... } })

	Canvas Canvas

	// Expanded instances in declaration order (files sorted by name, blocks
	// in file order, instances in index or key order).
	Sources []*Source
	Scenes  []*Scene
	Buses   []*Bus
	Outputs []*Output
	Tallies []*Tally
	Moved   []*Moved

	// Files holds the show's source files by name, as read, so that
	// diagnostics can print snippets and lint can read inline comments.
	Files map[string][]byte
	// Hash is the hex SHA-256 over the show's files (names and bytes, in
	// name order) and the variable values in effect.
	Hash string
	// Dir is the directory of the show's (first) file as it was named: the
	// paths in the model (Source.Path, Output.Path, Source.Socket) are
	// usable from where onair runs, and Rel turns them back into paths
	// relative to the show, which is how a plan carries them.
	Dir string
	// written holds the paths the show wrote as absolute paths, which
	// stay absolute in a plan.
	written map[string]bool

	DeclRange hcl.Range // the show block
	Attrs     Attrs
}

// Rel returns p relative to the show's directory (Dir), which is how plans
// carry paths, so that a saved plan runs wherever its show is. An absolute
// path outside the show's directory (a socket under /run) stays absolute.
func (s *Show) Rel(p string) string {
	if p == "" || s.written[p] || filepath.IsAbs(p) != filepath.IsAbs(s.Dir) {
		return p
	}
	r, err := filepath.Rel(s.Dir, p)
	if err != nil {
		return p
	}
	return r
}

// Attrs maps an attribute name to the range of its whole expression
// (name = value). An attribute absent from the map took its default.
type Attrs map[string]hcl.Range

// Has reports whether the attribute was written in the show file.
func (a Attrs) Has(name string) bool { _, ok := a[name]; return ok }

// Canvas holds the settings that decide how frames travel, by the names the
// schema gives them (canvas.raw_upload is Settings.String("raw_upload")),
// every one with its default applied by the decoder. The plan carries the
// same Settings: a new canvas key is one line in the schema plus its use.
type Canvas struct {
	value.Settings

	DeclRange hcl.Range // zero when the show has no canvas block
	Attrs     Attrs
}

// Source is one expanded source instance.
type Source struct {
	Kind string // hevc_file | h264_file | raw_file | browser | test_pattern
	Name string // the block's label, "cam"
	Key  Key    // the instance key; Key.Kind == NoKey without count/for_each

	// Index is the instance's position in Show.Sources (placement does not
	// read it: a source's loop follows from its address).
	Index int

	Path      string      // media file, absolute or relative to the show file's dir, resolved to a clean path
	Loop      bool        // file sources: loop at the end
	OnError   string      // file sources: black | hold, what shows while the file is unusable
	Format    PixelFormat // raw_file, test_pattern; decoded format for hevc/h264 (nv12 unless p010 declared)
	Size      Size        // frame size; defaults to the show's size
	FrameRate Rational    // defaults to the show's rate
	Streams   int         // hevc/h264: streams in the file (1 = one video stream; input routing may skip demux)
	Socket    string      // browser: Unix socket path
	Keying    string      // browser: the key attribute, alpha | none: what the page's alpha does ("": alpha)
	Pattern   string      // test_pattern: bars | ramp | solid | noise
	Colour    Colour      // colour tags stamped at the source
	// Audio is the source's audio block (its strip on every bus); nil
	// without one.
	Audio *AudioStrip
	// Extra are the attributes of the source's kind that the fields above
	// do not hold, by name, as the show wrote them (paths resolved): what
	// a kind added to the schema reads through its node kinds' lowering
	// (nodes.Element.Attrs) with no field of its own here.
	Extra value.Settings

	DeclRange hcl.Range
	Attrs     Attrs
}

// Codec is what an encoded file source holds (hevc, h264); "" for raw
// pictures and the sources that read no file.
func (s *Source) Codec() string { return fileCodecs[s.Kind] }

// fileCodecs is the coding of each encoded file source kind.
var fileCodecs = map[string]string{"hevc_file": "hevc", "h264_file": "h264"}

// Address is the source's name as written in a show: source.cam,
// source.cam[3] or source.cam["left"].
func (s *Source) Address() string { return "source." + s.Name + s.Key.String() }

// Scene is one expanded scene instance.
type Scene struct {
	Name   string
	Key    Key
	Layers []*Layer // in z order, bottom first

	DeclRange hcl.Range
	Attrs     Attrs
}

// Address is the scene's name as written in a show: scene.quad, scene.q[1].
func (s *Scene) Address() string { return "scene." + s.Name + s.Key.String() }

// Layer places one source on a scene's canvas.
type Layer struct {
	Source  *Source
	Rect    Rect    // where on the canvas; defaults to the whole canvas
	Fit     string  // stretch | contain | cover
	Crop    *Rect   // region of the source to use, nil = all of it
	Opacity float64 // 0..1
	Z       int     // stacking order; ties keep declaration order

	DeclRange hcl.Range
	Attrs     Attrs
}

// Bus is one expanded bus instance.
type Bus struct {
	Kind string // program | aux
	Name string
	Key  Key

	Scene  *Scene    // program: the scene on air at start; aux: set when it shows a scene
	Source *Source   // aux: set when it shows one source
	Audio  *BusAudio // the bus's audio block; nil without one
	// Routes are what an AUX bus may be switched to on air besides what
	// it starts with, in the order written (routes).
	Routes []Route

	DeclRange hcl.Range
	Attrs     Attrs
}

// Route is one source or one scene an AUX bus may be switched to.
type Route struct {
	Source *Source
	Scene  *Scene
}

// Address is the route's address: source.cam[0] or scene.quad.
func (r Route) Address() string {
	if r.Source != nil {
		return r.Source.Address()
	}
	return r.Scene.Address()
}

// AudioStrip is a source's channel on a bus's mixer: a source's audio
// block, or a strip in a bus's (Source set).
type AudioStrip struct {
	Source    *Source
	GainDB    float64
	Mute      bool
	Pan       float64
	Mode      string // follow | always | off
	DelayMs   int
	DeclRange hcl.Range
}

// BusAudio is a bus's audio block.
type BusAudio struct {
	MasterDB   float64
	MixMinusOf *Source
	MixMinusAt hcl.Range // where mix_minus_of is written
	Strips     []*AudioStrip
	DeclRange  hcl.Range
}

// Address is the bus's name as written in a show: bus.a, bus.mon[3].
func (b *Bus) Address() string { return "bus." + b.Name + b.Key.String() }

// Output is one expanded output instance.
type Output struct {
	Kind string // record | null | ffmpeg | preview | stream | file | hls
	Name string
	Key  Key
	Bus  *Bus

	Path       string   // record: Y4M file to write
	Args       []string // ffmpeg: arguments after the input options
	Audio      bool     // ffmpeg: the bus's sound as input 1
	IntervalMs int      // preview: time between JPEG snapshots
	Quality    int      // preview: JPEG quality 1..100
	// stream, file, hls (decode_delivery.go): Path is the file or the HLS
	// directory; Delivery the settings package delivery reads.
	Delivery *delivery.Output
	// Extra are the output kind's attributes the fields above do not
	// hold (Source.Extra).
	Extra value.Settings

	DeclRange hcl.Range
	Attrs     Attrs
}

// Address is the output's name as written in a show: output.pgm_a.
func (o *Output) Address() string { return "output." + o.Name + o.Key.String() }

// Tally is one tally block: where the show sends its tally.
type Tally struct {
	Kind      string // tsl5
	Name      string
	Address   string // the receiver's host
	Port      int
	Transport string // udp | tcp
	Screen    int

	DeclRange hcl.Range
	Attrs     Attrs
}

// Ref is the tally block's name as written in a show: tally.desk.
func (t *Tally) Ref() string { return "tally." + t.Name }

// Moved records a rename: the element once at From is now at To. Both are
// addresses in the show's own words ("source.a", "source.cam[3]").
type Moved struct {
	From, To  string
	DeclRange hcl.Range
}

// KeyKind says how an instance of a block was named.
type KeyKind int

const (
	NoKey     KeyKind = iota // a block without count or for_each
	IntKey                   // count: name[0], name[1], ...
	StringKey                // for_each: name["key"]
)

// Key is an instance key.
type Key struct {
	Kind KeyKind
	Int  int
	Str  string
}

// String renders the key as it is written after a name: "", "[3]", `["left"]`.
func (k Key) String() string {
	switch k.Kind {
	case IntKey:
		return "[" + itoa(k.Int) + "]"
	case StringKey:
		return "[" + quote(k.Str) + "]"
	}
	return ""
}

// Size is a frame size in pixels.
type Size = value.Size

// Rect is x, y, width and height in canvas pixels.
type Rect struct{ X, Y, W, H int }

// Rational is an exact frame rate or time base, always reduced, Den > 0.
type Rational = value.Rational

// PixelFormat is a frame format.
type PixelFormat string

const (
	NV12 PixelFormat = "nv12"
	P010 PixelFormat = "p010"
)

// BitDepth is 8 for NV12 and 10 for P010.
func (f PixelFormat) BitDepth() int {
	if f == P010 {
		return 10
	}
	return 8
}

// Colour holds the colour tags a source stamps on its frames.
type Colour struct {
	Primaries string // bt709 | bt2020 | bt601
	Transfer  string // bt709 | pq | hlg | srgb
	Matrix    string // bt709 | bt2020nc | bt601
	Range     string // limited | full
}

func itoa(i int) string     { return strconv.Itoa(i) }
func quote(s string) string { return strconv.Quote(s) }
