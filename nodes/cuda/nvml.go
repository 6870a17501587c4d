package cuda

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/metrics"
)

// GPUStatus is what NVML reports of the GPU a show runs on (device 0): in
// /status under "device", and as onair_gpu_* metrics; for a show on several
// GPUs (canvas gpus), each of them under "gpus".
type GPUStatus struct {
	GPUReading
	// GPUs is every GPU of a show on several, device 0 first; empty on one.
	GPUs []GPUReading `json:"gpus,omitempty"`
	// PageLockedHostBytes is the host memory onair holds page-locked
	// through CUDA (cuda.PageLockedBytes): not in /proc's VmLck or VmPin.
	PageLockedHostBytes int64 `json:"page_locked_host_bytes"`
	// DecodeLoops are the decode loops' counters since they started (not
	// decoders on threads of their own).
	DecodeLoops []DecodeLoopStatus `json:"decode_loops,omitempty"`
	// RecordedFiles and RecordedBytes are the HEVC and H.264 files held in
	// memory for looping (es.Recordings), and the bytes kept for them.
	RecordedFiles int   `json:"recorded_files"`
	RecordedBytes int64 `json:"recorded_bytes"`
	// PeerCopies are the frames copied between the GPUs of a show on
	// several (gpus.go), by pair; empty on one.
	PeerCopies []PeerCopyStatus `json:"peer_copies,omitempty"`
}

// GPUReading is NVML's reading of one GPU.
type GPUReading struct {
	Device int    `json:"device"` // its index, as canvas gpus counts them
	Name   string `json:"name"`
	// Utilization is the percent of the last sample period the GPU,
	// its memory interface and its decoders (NVDEC) were busy.
	GPUPercent     uint32 `json:"gpu_percent"`
	MemoryPercent  uint32 `json:"memory_percent"`
	DecoderPercent uint32 `json:"decoder_percent"`
	// VRAM in bytes.
	MemoryUsedBytes  uint64 `json:"memory_used_bytes"`
	MemoryTotalBytes uint64 `json:"memory_total_bytes"`
	// PCIe throughput over the last 20 ms, in bytes a second: to the GPU
	// (RX) and from it (TX).
	PCIeRxBytesPerSec uint64 `json:"pcie_rx_bytes_per_sec"`
	PCIeTxBytesPerSec uint64 `json:"pcie_tx_bytes_per_sec"`
	// Error says why a reading failed (no NVML on this machine); the other
	// NVML fields are then zero.
	Error string `json:"error,omitempty"`
}

// DecodeLoopStatus is one decode loop's counters since it started: the
// pictures it decoded, the wall time of its phases (feeding the parser,
// mapping and queueing copies, waiting for them, unmapping), and with
// ONAIR_NVDEC_CLOCKS set the thread's CPU by NVIDIA call (cuda.NVDECLoopStats).
type DecodeLoopStatus struct {
	Loop     string `json:"loop"`
	Pictures int64  `json:"pictures"`
	Rounds   int64  `json:"rounds"`
	FeedNs   int64  `json:"feed_ns"`
	MapNs    int64  `json:"map_ns"`
	WaitNs   int64  `json:"wait_ns"`
	UnmapNs  int64  `json:"unmap_ns"`
	// Sleeps are the times the loop slept for want of work; WakeWrites the
	// wake-ups other threads wrote to end a sleep.
	Sleeps     int64      `json:"sleeps"`
	WakeWrites int64      `json:"wake_writes"`
	CPU        *DecodeCPU `json:"cpu_ns,omitempty"`
}

// DecodeCPU is a decode loop's thread CPU in ns by call: the parse
// (NVIDIA's cuvidParseVideoData, or onair's parser), the decode calls made
// in it, the maps, the plane copies queued, the status reads and unmaps.
type DecodeCPU struct {
	Parse  int64 `json:"parse"`
	Decode int64 `json:"decode"`
	Map    int64 `json:"map"`
	Copy   int64 `json:"copy"`
	Status int64 `json:"status"`
	Unmap  int64 `json:"unmap"`
}

// DecodeCounters sums the decode loops' counters by name ("pictures",
// "parse_ns", ...; the CPU ones only with ONAIR_NVDEC_CLOCKS): how `onair
// bench` reads them from a show's device report.
func (s GPUStatus) DecodeCounters() map[string]int64 {
	if len(s.DecodeLoops) == 0 {
		return nil
	}
	m := map[string]int64{}
	for _, l := range s.DecodeLoops {
		m["pictures"] += l.Pictures
		if c := l.CPU; c != nil {
			m["parse_ns"] += c.Parse
			m["decode_ns"] += c.Decode
			m["map_ns"] += c.Map
			m["copy_ns"] += c.Copy
			m["status_ns"] += c.Status
			m["unmap_ns"] += c.Unmap
		}
	}
	return m
}

// collectDecode emits the decode loops' counters, by loop, and what the
// recordings hold, as /metrics samples.
func (s GPUStatus) collectDecode(emit func(metrics.Sample)) {
	emit(metrics.Sample{Name: "onair_recorded_files", Help: "HEVC and H.264 files held in memory for looping.", Kind: metrics.Gauge, Value: float64(s.RecordedFiles)})
	emit(metrics.Sample{Name: "onair_recorded_bytes", Help: "Bytes held in memory for the files looped from memory.", Kind: metrics.Gauge, Value: float64(s.RecordedBytes)})
	for _, l := range s.DecodeLoops {
		lb := [][2]string{{"loop", l.Loop}}
		c := func(name, help string, v float64) {
			emit(metrics.Sample{Name: name, Help: help, Kind: metrics.Counter, Labels: lb, Value: v})
		}
		c("onair_decode_pictures_total", "Pictures a decode loop decoded and handed on.", float64(l.Pictures))
		c("onair_decode_rounds_total", "Rounds of a decode loop: feeding its decoders, then mapping and copying what came out.", float64(l.Rounds))
		c("onair_decode_feed_seconds_total", "Wall time a decode loop spent feeding access units to NVDEC.", float64(l.FeedNs)/1e9)
		c("onair_decode_map_seconds_total", "Wall time a decode loop spent mapping pictures and queueing their copies.", float64(l.MapNs)/1e9)
		c("onair_decode_wait_seconds_total", "Wall time a decode loop spent waiting for its copies.", float64(l.WaitNs)/1e9)
		c("onair_decode_unmap_seconds_total", "Wall time a decode loop spent unmapping pictures.", float64(l.UnmapNs)/1e9)
		c("onair_decode_sleeps_total", "Times a decode loop slept for want of work (a frame to decode into, an access unit).", float64(l.Sleeps))
		c("onair_decode_wake_writes_total", "Wake-ups other threads wrote to end a decode loop's sleep.", float64(l.WakeWrites))
	}
}

// PageLocked is the host memory onair holds page-locked through CUDA: how
// `onair bench` reads it from a show's device report.
func (s GPUStatus) PageLocked() int64 { return s.PageLockedHostBytes }

// gpuMonitor reads NVML (loaded at run time: libnvidia-ml.so.1 comes with
// the driver) for the show's GPUs: devices 0 to canvas gpus-1.
type gpuMonitor struct {
	mu   sync.Mutex
	devs []nvml.Device
	err  string
}

func newGPUMonitor(n int) *gpuMonitor {
	m := &gpuMonitor{}
	if ret := nvml.Init(); ret != nvml.SUCCESS {
		m.err = fmt.Sprintf("NVML: %v (is libnvidia-ml.so.1 installed with the driver?)", nvml.ErrorString(ret))
		return m
	}
	for i := range max(n, 1) {
		dev, ret := nvml.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			m.err = fmt.Sprintf("NVML: device %d: %v", i, nvml.ErrorString(ret))
			nvml.Shutdown()
			m.devs = nil
			return m
		}
		m.devs = append(m.devs, dev)
	}
	return m
}

// Read samples the GPUs now.
func (m *gpuMonitor) Read() GPUStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := GPUStatus{PageLockedHostBytes: gpu.PageLockedBytes()}
	if len(m.devs) == 0 {
		s.Error = m.err
		return s
	}
	for i, dev := range m.devs {
		r := readGPU(dev)
		r.Device = i
		if i == 0 {
			s.GPUReading = r
		}
		if len(m.devs) > 1 {
			s.GPUs = append(s.GPUs, r)
		}
	}
	return s
}

// readGPU samples one GPU.
func readGPU(dev nvml.Device) GPUReading {
	var s GPUReading
	var errs []string
	note := func(what string, ret nvml.Return) {
		if ret != nvml.SUCCESS {
			errs = append(errs, what+": "+nvml.ErrorString(ret))
		}
	}
	var ret nvml.Return
	s.Name, ret = dev.GetName()
	note("name", ret)
	u, ret := dev.GetUtilizationRates()
	note("utilization", ret)
	s.GPUPercent, s.MemoryPercent = u.Gpu, u.Memory
	s.DecoderPercent, _, ret = dev.GetDecoderUtilization()
	note("decoder utilization", ret)
	mem, ret := dev.GetMemoryInfo()
	note("memory", ret)
	s.MemoryUsedBytes, s.MemoryTotalBytes = mem.Used, mem.Total
	rx, ret := dev.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES)
	note("PCIe RX", ret)
	tx, ret := dev.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES)
	note("PCIe TX", ret)
	s.PCIeRxBytesPerSec, s.PCIeTxBytesPerSec = uint64(rx)*1024, uint64(tx)*1024 // NVML counts KB/s
	if len(errs) > 0 {
		s.Error = fmt.Sprint(errs)
	}
	return s
}

// Collect emits the reading as metrics.
func (m *gpuMonitor) Collect(emit func(metrics.Sample)) { m.Read().collectGPUs(emit) }

// collectGPUs emits what the host holds page-locked and each GPU's
// reading: labelled by the GPU's name, and on a show of several GPUs by
// its index (device) too, so that two GPUs of one model are two series.
func (s GPUStatus) collectGPUs(emit func(metrics.Sample)) {
	emit(metrics.Sample{Name: "onair_page_locked_host_bytes", Help: "Host memory onair holds page-locked through CUDA (not in VmLck or VmPin).",
		Kind: metrics.Gauge, Value: float64(s.PageLockedHostBytes)})
	if len(s.GPUs) == 0 {
		if s.Error == "" || s.Name != "" {
			s.GPUReading.collect(emit, [][2]string{{"gpu", s.Name}})
		}
		return
	}
	for _, r := range s.GPUs {
		r.collect(emit, [][2]string{{"gpu", r.Name}, {"device", strconv.Itoa(r.Device)}})
	}
}

// collect emits one GPU's reading with labels l.
func (s GPUReading) collect(emit func(metrics.Sample), l [][2]string) {
	g := func(name, help string, v float64) {
		emit(metrics.Sample{Name: name, Help: help, Kind: metrics.Gauge, Labels: l, Value: v})
	}
	g("onair_gpu_utilization_ratio", "Share of the last sample period the GPU was busy (NVML).", float64(s.GPUPercent)/100)
	g("onair_gpu_memory_utilization_ratio", "Share of the last sample period the GPU's memory interface was busy (NVML).", float64(s.MemoryPercent)/100)
	g("onair_gpu_decoder_utilization_ratio", "Share of the last sample period the GPU's decoders (NVDEC) were busy (NVML).", float64(s.DecoderPercent)/100)
	g("onair_gpu_memory_used_bytes", "GPU memory in use, all processes (NVML).", float64(s.MemoryUsedBytes))
	g("onair_gpu_memory_total_bytes", "GPU memory (NVML).", float64(s.MemoryTotalBytes))
	g("onair_gpu_pcie_rx_bytes_per_second", "PCIe traffic to the GPU over the last 20 ms (NVML).", float64(s.PCIeRxBytesPerSec))
	g("onair_gpu_pcie_tx_bytes_per_second", "PCIe traffic from the GPU over the last 20 ms (NVML).", float64(s.PCIeTxBytesPerSec))
}

func (m *gpuMonitor) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.devs) > 0 {
		nvml.Shutdown()
		m.devs = nil
	}
}
