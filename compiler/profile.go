package compiler

import (
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
)

// Figure is one number of a capacity profile, with where it came from: a
// measurement in the seeds, a datasheet, or an estimate (said so).
type Figure struct {
	Value  float64 `json:"value"`
	Source string  `json:"source"`
}

// SourceLimit is how many sources a GPU carries at a frame rate, for a
// raw_upload mode ("*" for any).
type SourceLimit struct {
	Mode          string  `json:"mode"`
	FrameRate     float64 `json:"frame_rate"`
	MaxSources    int     `json:"max_sources,omitempty"`
	MaxRawSources int     `json:"max_raw_sources,omitempty"`
	// AppliesFrom, when set, limits the entry to shows at or above this
	// frame rate (a failure seen at 60 fps says nothing about 30).
	AppliesFrom float64 `json:"applies_from,omitempty"`
	Source      string  `json:"source"`
}

// Profile is a capacity profile: what the capacity check and the plan's
// budgets compare estimates against. A GPU's (Backend "") carries the
// GPU's figures; a CPU profile (Backend "cpu") carries a host's cores and
// memory instead, which HostProfile fills in from the machine.
type Profile struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Backend is "cpu" for a profile of a host's CPU, "" for a GPU's.
	Backend string `json:"backend,omitempty"`
	// Cores is the host's CPU cores: for a CPU profile those the show's
	// goroutines may run on, for a GPU's its host's, which the show's
	// encodes are compared with (lint: encodes-exceed-cores; absent, 0:
	// unknown). MemoryBytes is a CPU profile's host memory.
	Cores        Figure `json:"cores,omitzero"`
	MemoryBytes  Figure `json:"memory_bytes,omitzero"`
	NVDECEngines Figure `json:"nvdec_engines,omitzero"`
	// NVDECFramesPerSec is 1080p frames per second over all engines.
	NVDECFramesPerSec Figure `json:"nvdec_frames_per_sec"`
	// DecodeLoops is how many decode loops serve the show's NVDEC decoders
	// by default (canvas decode_loops = 0).
	DecodeLoops     Figure `json:"decode_loops"`
	VRAMBytes       Figure `json:"vram_bytes"`
	PCIeGeneration  Figure `json:"pcie_generation"`
	PCIeWidth       Figure `json:"pcie_width"`
	PCIeBytesPerSec Figure `json:"pcie_usable_bytes_per_sec"`
	// PinnedHostBytes is how much page-locked host memory a show may take.
	PinnedHostBytes Figure        `json:"pinned_host_bytes"`
	NVENC           Figure        `json:"nvenc"` // 1 present, 0 absent
	SourceLimits    []SourceLimit `json:"source_limits"`
	// NVDECCaps is what the GPU's decoder takes, per codec (none listed:
	// not checked).
	NVDECCaps []NVDECCap `json:"nvdec_caps,omitempty"`
	// Encoders are measured CPU costs of software encoders on this
	// machine class, what the plan estimates each delivery output's
	// encoding from (EncodeCost).
	Encoders []EncoderCost `json:"encoders,omitempty"`
	// ShowCPU is a GPU profile's reading of onair's own CPU in a show,
	// what the plan estimates a show's own CPU from (nil: not estimated).
	ShowCPU *ShowCPU `json:"show_cpu,omitempty"`
	// Devices are the device names (as the driver reports them, matched
	// as words) of the GPUs the profile describes: a show that names no
	// profile is checked against the one of the GPU it runs on.
	Devices []string `json:"devices,omitempty"`
}

// ProfileForDevice names the embedded profile of a GPU by the name its
// driver reports ("NVIDIA H200" is nvidia_h200), or "" when none is.
func ProfileForDevice(device string) string {
	words := strings.Fields(device)
	for _, name := range ProfileNames() {
		for _, d := range profiles[name].Devices {
			if slices.Contains(words, d) {
				return name
			}
		}
	}
	return ""
}

// EncoderCost is one encoder's measured CPU at one preset, size and rate:
// CorePercent of one core for each of Concurrent outputs encoding at
// once, fed at the output's rate (Paced: as a bus feeds it, delivery's
// BenchmarkEncoderCPUPaced or a show's own reading) or as fast as the
// encoder took pictures (delivery's BenchmarkEncoderCPU, which reads
// an encoder alone lower than a show runs it: 192.3 % against 245 % on
// the H200).
type EncoderCost struct {
	Encoder     string  `json:"encoder"` // an ffmpeg encoder: libx264, libx265
	Preset      string  `json:"preset"`
	Width       int     `json:"width"`
	Height      int     `json:"height"`
	FrameRate   float64 `json:"frame_rate"`
	Concurrent  int     `json:"concurrent"` // 1: alone
	Paced       bool    `json:"paced"`
	CorePercent float64 `json:"core_percent"`
	Source      string  `json:"source"`
}

// EncodeEstimate is what EncodeCost made of a profile's figures: the
// share of one core (in %) an output takes and, in words, which figures
// it came from (the plan says so beside each output).
type EncodeEstimate struct {
	CorePercent float64
	Basis       string
}

// EncodeCost estimates the share of one core (in %) an output encoding
// w×h at fps with encoder and preset takes on this machine class while
// concurrent outputs encode at once (the show's software encodes, this
// one among them). For each concurrency the profile measured the pair
// at, it takes the paced figure where there is one (else the one fed as
// fast as the encoder took pictures) of the size nearest the output's;
// between two concurrencies it interpolates linearly, and outside them
// it takes the nearest (it does not extrapolate). The figure is scaled
// by pixels per second (an encoder's work grows about linearly with
// them). ok is false when the profile has no figure for the pair.
func (p *Profile) EncodeCost(encoder, preset string, w, h int, fps float64, concurrent int) (est EncodeEstimate, ok bool) {
	pixels := float64(w) * float64(h) * fps
	best := map[int]*EncoderCost{} // by concurrency
	for i := range p.Encoders {
		e := &p.Encoders[i]
		if e.Encoder != encoder || e.Preset != preset || e.Width <= 0 || e.Height <= 0 || e.FrameRate <= 0 || e.Concurrent < 1 {
			continue
		}
		if b := best[e.Concurrent]; b == nil || e.Paced && !b.Paced || e.Paced == b.Paced && sizeGap(e, pixels) < sizeGap(b, pixels) {
			best[e.Concurrent] = e
		}
	}
	if len(best) == 0 {
		return EncodeEstimate{}, false
	}
	ns := slices.Sorted(maps.Keys(best))
	concurrent = max(concurrent, 1)
	lo, hi := ns[0], ns[len(ns)-1] // the nearest measured at or below concurrent, and at or above
	for _, n := range ns {
		if n <= concurrent {
			lo = n
		}
	}
	for _, n := range slices.Backward(ns) {
		if n >= concurrent {
			hi = n
		}
	}
	scaled := func(e *EncoderCost) float64 {
		return e.CorePercent * pixels / (float64(e.Width) * float64(e.Height) * e.FrameRate)
	}
	a, b := best[lo], best[hi]
	est.CorePercent = scaled(a)
	if lo != hi {
		est.CorePercent += (scaled(b) - scaled(a)) * float64(concurrent-lo) / float64(hi-lo)
	}
	switch {
	case lo != hi:
		est.Basis = fmt.Sprintf("between %s and %s, at %d", figureWords(a), figureWords(b), concurrent)
	case lo != concurrent:
		est.Basis = fmt.Sprintf("from %s; %d at once not measured", figureWords(a), concurrent)
	default:
		est.Basis = "from " + figureWords(a)
	}
	for _, e := range []*EncoderCost{a, b} {
		if float64(e.Width)*float64(e.Height)*e.FrameRate != pixels {
			est.Basis += fmt.Sprintf(", scaled from %dx%d@%g by pixels per second", e.Width, e.Height, e.FrameRate)
			break
		}
	}
	return est, true
}

// figureWords names one measured figure in the plan: "4 at once paced
// (245.05 %)", "1 alone fed flat out (192.3 %)".
func figureWords(e *EncoderCost) string {
	at := fmt.Sprintf("%d at once", e.Concurrent)
	if e.Concurrent == 1 {
		at = "1 alone"
	}
	fed := "paced"
	if !e.Paced {
		fed = "fed flat out"
	}
	return fmt.Sprintf("%s %s (%g %%)", at, fed, e.CorePercent)
}

// sizeGap is how far a figure's pixels per second are from pixels, as a
// ratio either way (0: the same).
func sizeGap(e *EncoderCost, pixels float64) float64 {
	return math.Abs(math.Log(float64(e.Width) * float64(e.Height) * e.FrameRate / pixels))
}

// ShowCPU is onair's own CPU (its process, every thread) read in a show
// on a GPU profile's machine: Sources at FrameRate took CorePercent of
// one core. The plan scales it by the show's sources × frame rate to
// estimate a show's own CPU, which lint encodes-exceed-cores adds to its
// encodes'.
type ShowCPU struct {
	Sources     int     `json:"sources"`
	FrameRate   float64 `json:"frame_rate"`
	CorePercent float64 `json:"core_percent"`
	Source      string  `json:"source"`
}

// NVDECCap is the range of pictures NVDEC decodes for one codec.
type NVDECCap struct {
	Codec     string `json:"codec"` // hevc | h264
	BitDepths []int  `json:"bit_depths"`
	MinWidth  int    `json:"min_width"`
	MinHeight int    `json:"min_height"`
	MaxWidth  int    `json:"max_width"`
	MaxHeight int    `json:"max_height"`
	Source    string `json:"source"`
}

//go:embed profiles/*.json
var profileFS embed.FS

var profiles = map[string]*Profile{}

func init() {
	ents, err := profileFS.ReadDir("profiles")
	if err != nil {
		panic(err)
	}
	for _, e := range ents {
		b, err := profileFS.ReadFile("profiles/" + e.Name())
		if err != nil {
			panic(err)
		}
		p, err := ParseProfile(b)
		if err != nil {
			panic("compiler: profiles/" + e.Name() + ": " + err.Error())
		}
		if p.Name+".json" != e.Name() {
			panic("compiler: profiles/" + e.Name() + " names itself " + p.Name)
		}
		profiles[p.Name] = p
	}
}

// ParseProfile decodes a profile, refusing unknown fields and figures
// without a source note.
func ParseProfile(b []byte) (*Profile, error) {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, fmt.Errorf("profile has no name")
	}
	figures := map[string]Figure{"nvdec_engines": p.NVDECEngines, "nvdec_frames_per_sec": p.NVDECFramesPerSec, "decode_loops": p.DecodeLoops,
		"vram_bytes": p.VRAMBytes, "pcie_generation": p.PCIeGeneration, "pcie_width": p.PCIeWidth,
		"pcie_usable_bytes_per_sec": p.PCIeBytesPerSec, "pinned_host_bytes": p.PinnedHostBytes, "nvenc": p.NVENC}
	switch p.Backend {
	case "":
	case "cpu":
		figures = map[string]Figure{"cores": p.Cores, "memory_bytes": p.MemoryBytes}
	default:
		return nil, fmt.Errorf("profile %s: backend %q: a profile is a GPU's (no backend) or a CPU's (\"cpu\")", p.Name, p.Backend)
	}
	for name, f := range figures {
		if f.Source == "" {
			return nil, fmt.Errorf("profile %s: %s has no source note", p.Name, name)
		}
	}
	for _, c := range p.NVDECCaps {
		if c.Source == "" {
			return nil, fmt.Errorf("profile %s: the NVDEC caps of %s have no source note", p.Name, c.Codec)
		}
	}
	if p.Cores.Value != 0 && p.Cores.Source == "" {
		return nil, fmt.Errorf("profile %s: cores has no source note", p.Name)
	}
	for _, e := range p.Encoders {
		if e.Source == "" {
			return nil, fmt.Errorf("profile %s: the figure of %s at preset %s has no source note", p.Name, e.Encoder, e.Preset)
		}
		if e.Concurrent < 1 {
			return nil, fmt.Errorf("profile %s: the figure of %s at preset %s has concurrent %d: write how many such outputs encoded at once when it was read (1: alone)", p.Name, e.Encoder, e.Preset, e.Concurrent)
		}
	}
	if c := p.ShowCPU; c != nil && (c.Source == "" || c.Sources < 1 || c.FrameRate <= 0) {
		return nil, fmt.Errorf("profile %s: show_cpu needs its sources (%d), frame_rate (%g) and a source note", p.Name, c.Sources, c.FrameRate)
	}
	for _, l := range p.SourceLimits {
		if l.Source == "" {
			return nil, fmt.Errorf("profile %s: source limit at %g fps has no source note", p.Name, l.FrameRate)
		}
	}
	return &p, nil
}

// LookupProfile returns an embedded profile by name.
func LookupProfile(name string) (*Profile, bool) {
	p, ok := profiles[name]
	return p, ok
}

// ProfileNames lists the embedded profiles.
func ProfileNames() []string { return sortedKeys(profiles) }

// SourceLimitFor returns the limits that apply to a show at fps with the
// given raw_upload mode: for each of "*" and mode, the entry with the lowest
// frame rate not below fps. Shows faster than every entry get the fastest.
func (p *Profile) SourceLimitFor(mode string, fps float64) []SourceLimit {
	var out []SourceLimit
	for _, m := range []string{"*", mode} {
		var best *SourceLimit
		var fastest *SourceLimit
		for i := range p.SourceLimits {
			l := &p.SourceLimits[i]
			if l.Mode != m || l.AppliesFrom > 0 && fps+1e-9 < l.AppliesFrom {
				continue
			}
			if fastest == nil || l.FrameRate > fastest.FrameRate {
				fastest = l
			}
			if l.FrameRate+1e-9 >= fps && (best == nil || l.FrameRate < best.FrameRate) {
				best = l
			}
		}
		if best == nil {
			best = fastest
		}
		if best != nil {
			out = append(out, *best)
		}
		if mode == "*" {
			break
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Mode < out[j].Mode })
	return out
}

// gib renders a byte count in GiB, or MiB/KiB when smaller.
func gib(b float64) string {
	switch {
	case b >= math.Pow(2, 30):
		return fmt.Sprintf("%.1f GiB", b/math.Pow(2, 30))
	case b >= math.Pow(2, 20):
		return fmt.Sprintf("%.1f MiB", b/math.Pow(2, 20))
	case b > 0:
		return fmt.Sprintf("%.1f KiB", b/1024)
	}
	return "0"
}
