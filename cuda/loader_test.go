package cuda_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/cuda"
)

// These run everywhere: no GPU needed.

// TestLoaderRefusesANonDriver: a library without the driver's entry points
// is refused with the first missing call named.
func TestLoaderRefusesANonDriver(t *testing.T) {
	err := cuda.LoadDriver("libc.so.6")
	if err == nil || !strings.Contains(err.Error(), "has no cuInit") || !strings.Contains(err.Error(), "too old") {
		t.Fatalf("loading libc as the driver: %v", err)
	}
	err = cuda.LoadDriver("libonair-no-such-driver.so.1")
	if err == nil || !strings.Contains(err.Error(), "no NVIDIA driver") || !strings.Contains(err.Error(), "libonair-no-such-driver.so.1") {
		t.Fatalf("loading a missing library: %v", err)
	}
}

func TestVersionCheck(t *testing.T) {
	if err := cuda.CheckVersion("libcuda.so.1", 10020); err == nil || !strings.Contains(err.Error(), "CUDA 10.2, older than onair needs (CUDA 11.0)") {
		t.Errorf("CUDA 10.2: %v", err)
	}
	if err := cuda.CheckVersion("libcuda.so.1", 13000); err != nil {
		t.Errorf("CUDA 13.0: %v", err)
	}
}

func TestErrorText(t *testing.T) {
	e := &cuda.Error{Call: "cuMemAlloc", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY", Text: "out of memory"}
	if !strings.HasPrefix(e.Error(), "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory): ") || !cuda.IsOutOfMemory(e) {
		t.Errorf("%q", e.Error())
	}
}

// TestPTXMatchesSource: the committed compositor.ptx was built from the
// kernel sources as they are. When this fails, the .cu or compositor.h
// changed: rebuild the PTX with `make ptx` on a machine with nvcc (the GPU
// machine) and commit it with kernels/compositor.sha256.
func TestPTXMatchesSource(t *testing.T) {
	rec, err := os.ReadFile("kernels/compositor.sha256")
	if err != nil {
		t.Fatalf("%v: run `make ptx` on the GPU machine", err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(rec)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("kernels/compositor.sha256: bad line %q", line)
		}
		want[filepath.Base(f[1])] = f[0]
	}
	for _, name := range []string{"kernels/compositor.cu", "compositor.h"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want[filepath.Base(name)] {
			t.Errorf("%s changed since kernels/compositor.ptx was built (sha256 %s, the PTX's %q): run `make ptx` on the GPU machine (it needs nvcc) and commit the PTX with kernels/compositor.sha256", name, got, want[filepath.Base(name)])
		}
	}
	ptx, err := os.ReadFile("kernels/compositor.ptx")
	if err != nil {
		t.Fatal(err)
	}
	// The cubins are this PTX assembled (make ptx records its hash last).
	sum := sha256.Sum256(ptx)
	if got := hex.EncodeToString(sum[:]); got != want["compositor.ptx"] {
		t.Errorf("kernels/compositor.ptx (sha256 %s) is not the PTX the cubins were assembled from (%q): run `make ptx` on the GPU machine and commit the cubins with kernels/compositor.sha256", got, want["compositor.ptx"])
	}
	for _, arch := range []string{"sm_90", "sm_89"} {
		b, err := os.ReadFile("kernels/compositor." + arch + ".cubin")
		if err != nil {
			t.Errorf("%v: the profiles' GPUs load machine code; run `make ptx` on the GPU machine", err)
		} else if len(b) < 4 || string(b[:4]) != "\x7fELF" {
			t.Errorf("kernels/compositor.%s.cubin is not an ELF image", arch)
		}
	}
	v, target := cuda.PTXInfo(string(ptx))
	if v != "7.0" || target != "sm_75" {
		t.Errorf("compositor.ptx declares ISA %q for %q; want 7.0 (what CUDA 11.0 drivers load, the loader's minimum) and sm_75 (compute_75, which T4, L4 and H200 all run): build it with `make ptx`", v, target)
	}
	for _, k := range []string{"onair_draw4", "onair_draw16", "onair_draw48", "onair_transition", "onair_busy", "onair_copy8", "onair_copy128"} {
		if !strings.Contains(string(ptx), ".entry "+k+"(") {
			t.Errorf("compositor.ptx has no kernel %s", k)
		}
	}
}
