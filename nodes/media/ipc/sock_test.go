package ipc

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCheckSharedRefusesWhatCouldCrashTheMixer: only a memfd sealed
// against shrinking, long enough for the picture, may be mapped.
func TestCheckSharedRefusesWhatCouldCrashTheMixer(t *testing.T) {
	sealed, mem, err := NewMemfd("sealed", 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sealed)
	defer unix.Munmap(mem)
	if err := CheckShared(sealed, 4096); err != nil {
		t.Errorf("a sealed memfd: %v", err)
	}
	if err := CheckShared(sealed, 8192); err == nil || !strings.Contains(err.Error(), "holds 4096 bytes, the picture needs 8192") {
		t.Errorf("a short memfd: %v", err)
	}
	open, _ := unix.MemfdCreate("open", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	defer unix.Close(open)
	unix.Ftruncate(open, 4096)
	if err := CheckShared(open, 4096); err == nil || !strings.Contains(err.Error(), "F_SEAL_SHRINK") {
		t.Errorf("an unsealed memfd: %v", err)
	}
	var p [2]int
	unix.Pipe2(p[:], unix.O_CLOEXEC)
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	if err := CheckShared(p[0], 16); err == nil || !strings.Contains(err.Error(), "not a memfd") {
		t.Errorf("a pipe: %v", err)
	}
}
