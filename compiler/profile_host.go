package compiler

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// HostProfile is the cpu profile with this machine's figures: the cores
// the process may run on (runtime.NumCPU, which honours the CPU affinity
// mask) and the memory /proc/meminfo reports. A figure that cannot be read
// keeps the profile's.
func HostProfile() *Profile {
	mem, _ := os.ReadFile("/proc/meminfo")
	return hostProfile(runtime.NumCPU(), string(mem))
}

// hostProfile is the cpu profile with cores and a /proc/meminfo text.
func hostProfile(cores int, meminfo string) *Profile {
	p := *profiles["cpu"]
	if cores > 0 {
		p.Cores = Figure{Value: float64(cores), Source: "this machine: the cores onair may run on"}
	}
	if kb := memTotalKB(meminfo); kb > 0 {
		p.MemoryBytes = Figure{Value: float64(kb) * 1024, Source: "this machine: MemTotal of /proc/meminfo"}
	}
	return &p
}

// memTotalKB is MemTotal of a /proc/meminfo text in kB, 0 when absent.
func memTotalKB(meminfo string) int64 {
	sc := bufio.NewScanner(strings.NewReader(meminfo))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 2 && f[1] == "kB" {
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}
