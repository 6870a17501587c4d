package cuda

import (
	"os"
	"strings"
	"testing"
)

// TestProbe checks the probe against what the machine has: on a machine
// with an NVIDIA driver it must find at least one named device with memory;
// elsewhere it must say that no driver was found rather than fail oddly.
func TestProbe(t *testing.T) {
	d, err := Probe()
	_, statErr := os.Stat("/dev/nvidiactl")
	if statErr != nil {
		if err == nil {
			t.Fatalf("no /dev/nvidiactl, yet the probe found %+v", d)
		}
		if !strings.Contains(err.Error(), "libcuda.so.1") && !strings.Contains(err.Error(), "cuInit") {
			t.Fatalf("error does not say what is missing: %v", err)
		}
		t.Skipf("no GPU here: %v", err)
	}
	if err != nil {
		t.Fatalf("GPU device node present but probe failed: %v", err)
	}
	if len(d.Devices) == 0 || d.Devices[0].Name == "" || d.Devices[0].MemoryBytes == 0 {
		t.Fatalf("probe found %+v", d)
	}
	t.Logf("CUDA %s: %+v", d.VersionString(), d.Devices)
}

func TestProbeMissingLibrary(t *testing.T) {
	_, err := probe("libonair-no-such-driver.so.1")
	if err == nil || !strings.Contains(err.Error(), "libonair-no-such-driver.so.1") {
		t.Fatalf("err = %v", err)
	}
}
