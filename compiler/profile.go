package compiler

import (
	"embed"
	"encoding/json"
	"fmt"
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
// CorePercent of one core for one output (delivery's BenchmarkEncoderCPU).
type EncoderCost struct {
	Encoder     string  `json:"encoder"` // an ffmpeg encoder: libx264, libx265
	Preset      string  `json:"preset"`
	Width       int     `json:"width"`
	Height      int     `json:"height"`
	FrameRate   float64 `json:"frame_rate"`
	CorePercent float64 `json:"core_percent"`
	Source      string  `json:"source"`
}

// EncodeCost estimates the share of one core (in %) an output encoding
// w×h at fps with encoder and preset takes on this machine class: the
// measured figure for that encoder and preset, scaled by pixels per
// second (an encoder's work grows about linearly with them). ok is false
// when the profile has no figure for the pair.
func (p *Profile) EncodeCost(encoder, preset string, w, h int, fps float64) (percent float64, from *EncoderCost, ok bool) {
	for i := range p.Encoders {
		e := &p.Encoders[i]
		if e.Encoder != encoder || e.Preset != preset || e.Width <= 0 || e.Height <= 0 || e.FrameRate <= 0 {
			continue
		}
		scale := float64(w) * float64(h) * fps / (float64(e.Width) * float64(e.Height) * e.FrameRate)
		return e.CorePercent * scale, e, true
	}
	return 0, nil, false
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
