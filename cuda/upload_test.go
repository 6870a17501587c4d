package cuda

import (
	"testing"
)

// BenchmarkUpload measures host-to-device copies of a 1080p NV12 frame
// (3,110,400 bytes) from pageable and from page-locked memory: the PCIe
// figure the capacity profiles use for raw uploads. It needs a GPU.
func BenchmarkUpload(b *testing.B) {
	if _, err := Probe(); err != nil {
		b.Skipf("no GPU: %v", err)
	}
	const frame = 1920 * 1080 * 3 / 2
	for _, c := range []struct {
		name   string
		pinned bool
	}{{"pageable", false}, {"pinned", true}} {
		b.Run(c.name, func(b *testing.B) {
			u, err := MeasureUpload(frame, max(b.N, 200), c.pinned)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(u.BytesPerSec/1e9, "GB/s")
			b.ReportMetric(float64(frame)/u.BytesPerSec*1e6, "µs/frame")
		})
	}
}

// TestMeasureUploadNeedsAGPU: without a driver the measurement says so
// instead of failing in an odd way; with one it moves data.
func TestMeasureUploadNeedsAGPU(t *testing.T) {
	u, err := MeasureUpload(1<<20, 10, true)
	if _, perr := Probe(); perr != nil {
		if err == nil {
			t.Fatal("measured an upload without a GPU")
		}
		t.Skipf("no GPU: %v", err)
	}
	if err != nil || u.BytesPerSec <= 0 {
		t.Fatalf("upload on a GPU: %+v %v", u, err)
	}
	t.Logf("1 MiB pinned uploads: %.1f GB/s", u.BytesPerSec/1e9)
}
