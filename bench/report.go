package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

func (r Result) Write(w io.Writer) {
	fmt.Fprintf(w, "\n%s on %s: %d sources, %d buses at %s fps; %.0f s measured after %.0f s\n", r.Show, r.Backend, r.Sources, r.Buses, r.FrameRate, r.WindowS, r.WarmupS)
	fmt.Fprintf(w, "  CPU               %6.1f %% of one core (user %.1f %%, system %.1f %%)\n", r.CPUPercent, r.UserPercent, r.SystemPercent)
	fmt.Fprintf(w, "  threads           %6d\n", r.Threads)
	fmt.Fprintf(w, "  run queue         %6.1f %% of one core (%.0f ms over the window, all threads)\n", r.RunQueuePercent, r.RunQueueMs)
	for _, g := range sortedGroups(r.GroupCPU) {
		fmt.Fprintf(w, "    %-15s %6.1f %%  (%d threads)\n", g, r.GroupCPU[g], r.GroupThreads[g])
	}
	fmt.Fprintf(w, "  Go runtime        GOMAXPROCS %d, %d collections, GC about %.1f %% of one core (Go's estimate), heap allocations %.2f MB a second\n", r.GoMaxProcs, r.GCCycles, r.GCCPUPercent, r.AllocBytesPerS/1e6)
	fmt.Fprintf(w, "  bus frames        %6d, %d missed deadlines, %d repeats, %d skipped, %d output drops, %d switches\n", r.BusFrames, r.MissedDeadline, r.Repeats, r.Skipped, r.OutputDrops, r.Switches)
	var aux Bus
	auxN := 0
	for _, b := range r.PerBus {
		if b.Kind != "program" {
			auxN++
			aux.Frames, aux.Missed, aux.Repeats, aux.Skipped, aux.OutputDrops = aux.Frames+b.Frames, aux.Missed+b.Missed, aux.Repeats+b.Repeats, aux.Skipped+b.Skipped, aux.OutputDrops+b.OutputDrops
			aux.MaxDrawMs = max(aux.MaxDrawMs, b.MaxDrawMs)
			continue
		}
		fmt.Fprintf(w, "    %-15s %6d frames, %d missed, %d repeats, %d skipped, %d drops, longest draw %.1f ms, switches %s\n",
			b.Address, b.Frames, b.Missed, b.Repeats, b.Skipped, b.OutputDrops, b.MaxDrawMs, switchList(b.Switches))
	}
	if auxN > 0 {
		fmt.Fprintf(w, "    %-15s %6d frames, %d missed, %d repeats, %d skipped, %d drops, longest draw %.1f ms\n",
			fmt.Sprintf("%d AUX buses", auxN), aux.Frames, aux.Missed, aux.Repeats, aux.Skipped, aux.OutputDrops, aux.MaxDrawMs)
	}
	fmt.Fprintf(w, "  sources           %6d drops, %d underruns", r.SourceDrops, r.Underruns)
	if r.SoundLate > 0 {
		fmt.Fprintf(w, ", %d pictures with late sound (silence)", r.SoundLate)
	}
	fmt.Fprintln(w)
	if len(r.Encoders) > 0 {
		var cpu float64
		minSpeed, measured := r.Encoders[0].Speed, 0
		for _, e := range r.Encoders {
			minSpeed = min(minSpeed, e.Speed)
			if e.CPUPercent >= 0 {
				cpu += e.CPUPercent
				measured++
			}
		}
		fmt.Fprintf(w, "  encoders          %6d ffmpeg outputs, %d drops, slowest at %.2fx real time, %.1f %% of one core (%d read)\n", len(r.Encoders), r.EncoderDrops, minSpeed, cpu, measured)
		for _, e := range r.Encoders {
			fmt.Fprintf(w, "    %-15s %6d frames, %d drops, %d restarts, %.2fx, %.1f %% of one core\n", e.Address, e.Frames, e.Drops, e.Restarts, e.Speed, e.CPUPercent)
		}
	}
	if r.DecodePictures > 0 {
		fmt.Fprintf(w, "  decode loops      %6d pictures (%.0f a second)", r.DecodePictures, float64(r.DecodePictures)/r.WindowS)
		if c := r.DecodeCPUUs; c != nil {
			fmt.Fprintf(w, "; CPU µs a picture: parse %.1f (cuvidDecodePicture %.1f of it), map %.1f, copy %.1f, status %.1f, unmap %.1f",
				c["parse"], c["decode"], c["map"], c["copy"], c["status"], c["unmap"])
		}
		fmt.Fprintln(w)
	}
	if b := r.Browser; b != nil {
		fmt.Fprintf(w, "  browser sources   %6d: %d frames, %d converted, %d dropped; %d imports (%.2f a second), %d released, %d live\n",
			b.Sources, b.Frames, b.Converted, b.Dropped, b.Imports, b.ImportsPerS, b.ImportReleases, b.ImportsLive)
	}
	if l := r.Live; l != nil {
		fmt.Fprintf(w, "  live sources      %6d: %d frame-sync drops, %d underruns (repeats), %d on_error frames; %d packets, %d lost, %d recovered, %d dropped, %d continuity errors; %d not live at the end\n",
			l.Sources, l.SyncDrops, l.Underruns, l.ErrorFrames, l.Packets, l.Lost, l.Recovered, l.Dropped, l.Continuity, l.NotLive)
		if l.LatencyFrames > 0 || l.ClockSkew > 0 {
			fmt.Fprintf(w, "  live latency      %6d frames: p50 %.1f ms, p99 %.1f ms, max %.1f ms (sent to on air; the slowest source's), %d clock skew\n",
				l.LatencyFrames, l.LatencyP50Ms, l.LatencyP99Ms, l.LatencyMaxMs, l.ClockSkew)
		}
	}
	fmt.Fprintf(w, "  page-locked host  %6.0f MB (CUDA %.0f MB, VmLck+VmPin %.0f MB), resident %.0f MB\n",
		float64(r.LockedBytes)/1e6, float64(r.CUDALockedBytes)/1e6, float64(r.ProcLockedBytes)/1e6, float64(r.RSSBytes)/1e6)
	if m := r.DeviceMean; m != nil {
		fmt.Fprintf(w, "  GPU (NVML, mean of %d) %.0f %% busy, NVDEC %.0f %%, VRAM %.0f MB used, PCIe to GPU %.2f GB/s\n",
			r.DeviceSamples, m["gpu_percent"], m["decoder_percent"], m["memory_used_bytes"]/1e6, m["pcie_rx_bytes_per_sec"]/1e9)
	}
	if r.Device != nil {
		data, _ := json.Marshal(r.Device)
		fmt.Fprintf(w, "  device            %s\n", data)
	}
	if e := r.Estimate; e != nil && e.Binding != "" {
		fmt.Fprintf(w, "  plan estimate     %s binds: %d sources of this mix on %s (profile's source limit %d)\n", e.Binding, e.AllowsSources, e.Profile, e.ProfileSources)
	}
}

func switchList(m map[string]uint64) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range sortedGroups(nil, m) {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(parts, ", ")
}

// sortedGroups returns the keys of the maps, sorted.
func sortedGroups(f map[string]float64, u ...map[string]uint64) []string {
	var keys []string
	for k := range f {
		keys = append(keys, k)
	}
	for _, m := range u {
		for k := range m {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// Compare prints two results side by side, as a Markdown table, with the
// ratio before/after of each figure (the seeds' 791/234 = 3.4).
func Compare(a, b Result, stdout io.Writer) {
	fmt.Fprintf(stdout, "| | %s | %s | before/after |\n|---|---:|---:|---:|\n", a.Show, b.Show)
	row := func(name, format string, x, y float64) {
		ratio := "–"
		if y != 0 {
			ratio = fmt.Sprintf("%.2f", ratioOf(x, y))
		}
		fmt.Fprintf(stdout, "| %s | "+format+" | "+format+" | %s |\n", name, x, y, ratio)
	}
	row("CPU, % of one core", "%.1f", a.CPUPercent, b.CPUPercent)
	row("  user", "%.1f", a.UserPercent, b.UserPercent)
	row("  system", "%.1f", a.SystemPercent, b.SystemPercent)
	row("threads", "%.0f", float64(a.Threads), float64(b.Threads))
	row("run queue, % of one core", "%.1f", a.RunQueuePercent, b.RunQueuePercent)
	row("GC, % of one core (Go's estimate)", "%.1f", a.GCCPUPercent, b.GCCPUPercent)
	row("heap allocations, MB a second", "%.2f", a.AllocBytesPerS/1e6, b.AllocBytesPerS/1e6)
	groups := map[string]float64{}
	for g := range a.GroupCPU {
		groups[g] = 0
	}
	for g := range b.GroupCPU {
		groups[g] = 0
	}
	for _, g := range sortedGroups(groups) {
		row("  "+g, "%.1f", a.GroupCPU[g], b.GroupCPU[g])
	}
	row("missed deadlines", "%.0f", float64(a.MissedDeadline), float64(b.MissedDeadline))
	row("repeats", "%.0f", float64(a.Repeats), float64(b.Repeats))
	row("output drops", "%.0f", float64(a.OutputDrops), float64(b.OutputDrops))
	row("source drops", "%.0f", float64(a.SourceDrops), float64(b.SourceDrops))
	row("switches", "%.0f", float64(a.Switches), float64(b.Switches))
	row("page-locked host, MB", "%.0f", float64(a.LockedBytes)/1e6, float64(b.LockedBytes)/1e6)
	row("resident, MB", "%.0f", float64(a.RSSBytes)/1e6, float64(b.RSSBytes)/1e6)
	for _, k := range []struct{ key, name string }{{"gpu_percent", "GPU busy, %"}, {"decoder_percent", "NVDEC busy, %"}} {
		row(k.name, "%.0f", a.DeviceMean[k.key], b.DeviceMean[k.key])
	}
	row("VRAM used, MB", "%.0f", a.DeviceMean["memory_used_bytes"]/1e6, b.DeviceMean["memory_used_bytes"]/1e6)
	fmt.Fprintf(stdout, "\n%d sources, %d buses at %s fps; %.0f s windows after %.0f s and %.0f s of warm-up; CPU ratio before/after %.2f (the seeds: 791/234 = 3.38).\n",
		a.Sources, a.Buses, a.FrameRate, a.WindowS, a.WarmupS, b.WarmupS, ratioOf(a.CPUPercent, b.CPUPercent))
}

func ratioOf(x, y float64) float64 {
	if y == 0 {
		return 0
	}
	return x / y
}
