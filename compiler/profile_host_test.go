package compiler

import (
	"strings"
	"testing"
)

// TestHostProfile: a cpu plan is scored against the machine's cores and
// /proc/meminfo's MemTotal; a meminfo without a readable MemTotal keeps
// the profile file's figure, said as such.
func TestHostProfile(t *testing.T) {
	file := profiles["cpu"]
	for _, c := range []struct {
		cores   int
		meminfo string
		wantC   float64
		wantMem float64
		src     string
	}{
		{3, "MemTotal:       24684084 kB\nMemFree:         1000 kB\n", 3, 24684084 * 1024, "MemTotal"},
		{0, "MemFree: 1 kB\n", file.Cores.Value, file.MemoryBytes.Value, "assumption"},
		{2, "MemTotal: lots kB\n", 2, file.MemoryBytes.Value, "assumption"},
		{2, "MemTotal: 1024 MB\n", 2, file.MemoryBytes.Value, "assumption"},
	} {
		p := hostProfile(c.cores, c.meminfo)
		if p.Name != "cpu" || p.Backend != "cpu" || p.Cores.Value != c.wantC || p.MemoryBytes.Value != c.wantMem || !strings.Contains(p.MemoryBytes.Source, c.src) {
			t.Errorf("hostProfile(%d, %q) = %s %s cores %v, memory %v (%s); want %v cores, %v bytes from %s", c.cores, c.meminfo, p.Name, p.Backend, p.Cores.Value, p.MemoryBytes.Value, p.MemoryBytes.Source, c.wantC, c.wantMem, c.src)
		}
	}
	if profiles["cpu"].Cores.Value != file.Cores.Value {
		t.Error("hostProfile changed the embedded profile")
	}
	if p := HostProfile(); p.Cores.Value < 1 || p.MemoryBytes.Value < 1 {
		t.Errorf("HostProfile here: %+v", p)
	}
}

// FuzzMemTotal: any /proc/meminfo text gives a MemTotal that is positive
// or none, and never a crash.
func FuzzMemTotal(f *testing.F) {
	f.Add("MemTotal:       24684084 kB\n")
	f.Add("MemTotal: -5 kB\nMemTotal: 9 kB")
	f.Fuzz(func(t *testing.T, s string) {
		if kb := memTotalKB(s); kb < 0 {
			t.Fatalf("memTotalKB(%q) = %d", s, kb)
		}
	})
}
