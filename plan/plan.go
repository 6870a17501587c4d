// Package plan holds the compiled form of a show: nodes, edges, event loops,
// node groups, what fusion removed and why, and what the show will cost.
//
// A plan is the contract between the compiler (which writes it), the runtime
// (which executes it), and diff (which compares two of them). Its JSON form
// is versioned and deterministic: the same show and variables give the same
// bytes.
//
// Relative file paths in node params (a source's path, a record output's
// path, a browser's socket) are relative to the show's directory, as the
// show wrote them: a saved plan runs, and diffs, wherever its show is, and
// whoever runs it resolves them against the show's directory.
//
// This package must never import lang/, compiler/ or runtime/: a saved plan
// is read without the show it came from.
package plan

import "github.com/onairhq/onair/internal/value"

// FormatVersion is bumped whenever the JSON shape changes incompatibly; a
// plan of another version is refused with what to do (compile it again).
// 2: canvas settings and node params are read back with their types.
// 3: size, frame rate, pixel format and colour are typed: spelt as before,
// and a plan that spells one wrong is refused where it is read.
const FormatVersion = 3

// Plan is a compiled show.
type Plan struct {
	FormatVersion int    `json:"format_version"`
	ToolVersion   string `json:"tool_version"`
	Show          string `json:"show"`      // the show's name
	ShowHash      string `json:"show_hash"` // lang.Show.Hash
	Profile       string `json:"profile,omitempty"`
	// Backend is what the plan was compiled for: "cuda" (the GPU chains) or
	// "cpu" (the embedded backend's sources).
	Backend string `json:"backend,omitempty"`

	Size      value.Size        `json:"size"`       // "1920x1080"
	FrameRate value.Rational    `json:"frame_rate"` // "30" or "30000/1001"
	Format    value.PixelFormat `json:"format"`     // nv12 | p010

	// Canvas is the canvas settings in effect, defaults applied, by the
	// show language's names.
	Canvas value.Settings `json:"canvas"`

	Nodes     []Node    `json:"nodes"`
	Edges     []Edge    `json:"edges"`
	Loops     []Loop    `json:"loops"`
	Groups    []Group   `json:"groups"`
	Fusions   []Fusion  `json:"fusions"`
	Estimates Estimates `json:"estimates"`

	// Scenes are the layouts compositors draw; a compositor node's params
	// name the scenes it may show.
	Scenes []Scene `json:"scenes"`
	// Moved carries the show's moved blocks, so that a diff between two
	// saved plans still sees a rename as an update.
	Moved []Moved `json:"moved,omitempty"`
	// Tallies are where the show sends its tally (the show's tally blocks).
	Tallies []Tally `json:"tallies,omitempty"`
}

// Tally is one tally destination.
type Tally struct {
	Name      string `json:"name"`      // the block's name: "desk"
	Kind      string `json:"kind"`      // tsl5
	Transport string `json:"transport"` // udp | tcp
	Address   string `json:"address"`   // the receiver's host
	Port      int    `json:"port"`
	Screen    int    `json:"screen"`
	Range     *Range `json:"range,omitempty"`
}

// Scene is one scene layout.
type Scene struct {
	Address string  `json:"address"` // "scene.quad", "scene.q[3]"
	Layers  []Layer `json:"layers"`  // bottom first
	Range   *Range  `json:"range,omitempty"`
}

// Layer places one source on a scene.
type Layer struct {
	Source  string  `json:"source"` // the source's address
	Rect    [4]int  `json:"rect"`   // x, y, w, h on the canvas
	Fit     string  `json:"fit"`    // stretch | contain | cover
	Crop    *[4]int `json:"crop,omitempty"`
	Opacity float64 `json:"opacity"`
	Z       int     `json:"z"`
}

// Moved is a rename: the element once at From is now at To.
type Moved struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Node is one node of the compiled graph.
type Node struct {
	ID      string `json:"id"`      // unique: "<address>/<kind>" such as "source.cam[3]/dec_video"
	Kind    string `json:"kind"`    // a kind registered in nodes/
	Address string `json:"address"` // the show element it was made for: "source.cam[3]", "bus.a", "output.rec"
	Group   string `json:"group"`   // the node group it starts with

	Placement Placement      `json:"placement"`
	Params    value.Settings `json:"params,omitempty"` // string, int, bool or []string, the same read back from JSON
	Format    value.Stream   `json:"format,omitempty"` // what it emits: nv12 | p010 | packets | dmabuf
	Domain    string         `json:"domain,omitempty"` // where its output lives: host | device
	Size      value.Size     `json:"size,omitzero"`    // the frame size it emits, "1920x1080"; none for packets and sinks

	Range *Range `json:"range,omitempty"` // the show-file range that made it
}

// Placement says where a node runs: on a named event loop, or on a thread of
// its own (blocking nodes).
type Placement struct {
	Loop   string `json:"loop,omitempty"`
	Thread bool   `json:"thread,omitempty"`
	// GPU is the device index the node runs on when the show spans
	// several GPUs (canvas gpus above 1); nil on a show of one.
	GPU *int `json:"gpu,omitempty"`
}

// OnGPU is the GPU a placement names, and whether it names one.
func (p Placement) OnGPU() (int, bool) {
	if p.GPU == nil {
		return 0, false
	}
	return *p.GPU, true
}

// CrossGPU is a frame's copy from one GPU to another: the backend copies
// each frame of the edge's source once per tick into the destination
// GPU's pool (a peer copy), however many edges on that GPU read it.
type CrossGPU struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// GPUEstimate is what one GPU of a show spread over several carries.
type GPUEstimate struct {
	GPU               int      `json:"gpu"`
	Sources           int      `json:"sources"`
	Buses             int      `json:"buses"`
	VRAMBytes         int64    `json:"vram_bytes"`
	PCIeBytesPerSec   int64    `json:"pcie_bytes_per_sec"`
	NVDECFramesPerSec float64  `json:"nvdec_frames_per_sec"`
	PeerCopiesPerSec  float64  `json:"peer_copies_in_per_sec"` // frames copied onto this GPU from others
	PeerBytesPerSec   int64    `json:"peer_bytes_in_per_sec"`
	Budgets           []Budget `json:"budgets,omitempty"` // against one GPU of the profile
}

// Edge is a bounded queue between two nodes.
type Edge struct {
	From     string       `json:"from"`
	To       string       `json:"to"`
	Capacity int          `json:"capacity"`
	Policy   string       `json:"policy"`           // block | drop
	Format   value.Stream `json:"format,omitempty"` // what travels: nv12, p010, packets, dmabuf
	// Cross is set where the edge's ends run on different GPUs.
	Cross *CrossGPU `json:"cross_gpu,omitempty"`
}

// Loop is an event loop ("default" or "pacing_N") or, with a Kind, a loop
// the backend runs on a thread of its own: "nvdec" for a decode loop
// ("decode_N") that feeds the NVDEC decoders placed on it.
type Loop struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind,omitempty"`
	Sources []string `json:"sources,omitempty"` // addresses of the sources it paces
	Nodes   []string `json:"nodes,omitempty"`   // ids of the nodes placed on it
}

// Group is a node group: the unit that starts, waits for readiness and
// restarts together.
type Group struct {
	Name      string   `json:"name"`
	Order     int      `json:"order"`                // start order, 0 first
	DependsOn []string `json:"depends_on,omitempty"` // groups that must be ready first
	Readiness string   `json:"readiness"`            // e.g. "every edge leaving the group has carried a frame"
	// ReadyTimeoutMs is how long the group may take to become ready before
	// starting fails with an error naming the edge that carried no frame.
	ReadyTimeoutMs int  `json:"ready_timeout_ms,omitempty"`
	Restartable    bool `json:"restartable,omitempty"`
}

// Fusion is one entry of the fusion log: a pass that changed the naive graph.
type Fusion struct {
	Pass    string   `json:"pass"`
	Group   string   `json:"group"`
	Removed []string `json:"removed,omitempty"` // node ids removed
	Added   []string `json:"added,omitempty"`   // node ids added in their place
	Reason  string   `json:"reason"`
}

// Estimates is what the show will cost, and how that compares with the
// capacity profile.
type Estimates struct {
	Threads           int     `json:"threads"`
	EventLoops        int     `json:"event_loops"`
	Nodes             int     `json:"nodes"`
	Edges             int     `json:"edges"`
	VRAMBytes         int64   `json:"vram_bytes"`
	PinnedHostBytes   int64   `json:"pinned_host_bytes"`
	PCIeBytesPerSec   int64   `json:"pcie_bytes_per_sec"`
	NVDECFramesPerSec float64 `json:"nvdec_frames_per_sec"`
	// CPUCores and HostBytes are a cpu plan's: the cores its buses'
	// drawing keeps busy (each bus's dearest scene, every tick) and the
	// host memory its frames take (queues, canvases, readers' pools).
	CPUCores  float64  `json:"cpu_cores,omitempty"`
	HostBytes int64    `json:"host_bytes,omitempty"`
	Budgets   []Budget `json:"budgets,omitempty"` // each estimate against the profile
	// GPUs is each GPU's share of a show spread over several (canvas gpus
	// above 1), with the frames crossing between them; the show-wide
	// budgets above are then against all of them together.
	GPUs []GPUEstimate `json:"gpus,omitempty"`
	// Encodes are the delivery outputs' encoders with what each costs the
	// host's CPU, from the profile's measured figures; EncodeCorePercent
	// is their sum and HostCores the profile's host cores (0: unknown),
	// which lint compares it with.
	// ConcurrentEncodes is how many of them encode on the CPU at once,
	// the concurrency each one's figure is read at.
	Encodes           []Encode `json:"encodes,omitempty"`
	EncodeCorePercent float64  `json:"encode_core_percent,omitempty"`
	ConcurrentEncodes int      `json:"concurrent_encodes,omitempty"`
	HostCores         int      `json:"host_cores,omitempty"`
	// ShowCorePercent is onair's own CPU beside them, % of one core (a
	// cpu plan's drawing; a GPU plan's scaled from the profile's reading
	// of a show), which lint adds to EncodeCorePercent against HostCores.
	ShowCorePercent float64 `json:"show_core_percent,omitempty"`
	// Notes say how an estimate was made where it could not be measured
	// (a resident file that could not be read, for example).
	Notes []string `json:"notes,omitempty"`
}

// Encode is one delivery output's encoding and its estimated CPU.
type Encode struct {
	Output    string  `json:"output"` // the node's address
	Encoder   string  `json:"encoder"`
	Preset    string  `json:"preset"`
	Width     int     `json:"width"`
	Height    int     `json:"height"`
	FrameRate float64 `json:"frame_rate"`
	// CorePercent is the share of one core it takes (100: one core);
	// 0 with Measured false: the profile has no figure for the encoder
	// and preset.
	CorePercent float64 `json:"core_percent"`
	Measured    bool    `json:"measured"`
	// Basis says which of the profile's figures it came from: the
	// concurrency, paced or not, interpolated, scaled.
	Basis string `json:"basis,omitempty"`
}

// Budget is one estimate against one limit of the capacity profile.
type Budget struct {
	Name  string  `json:"name"`
	Used  float64 `json:"used"`
	Limit float64 `json:"limit"`
	Unit  string  `json:"unit"`
	OK    bool    `json:"ok"`
}

// Range is a range in a show file, as HCL reports it.
type Range struct {
	Filename string `json:"filename"`
	Start    Pos    `json:"start"`
	End      Pos    `json:"end"`
}

// Pos is a position in a show file; line and column count from 1.
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}
