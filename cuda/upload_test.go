package cuda

import (
	"fmt"
	"testing"
	"time"
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

// Upload is one measurement of host-to-device copies.
type Upload struct {
	Bytes       int     // bytes per copy
	Copies      int     // copies timed
	Pinned      bool    // from page-locked host memory, else pageable
	BytesPerSec float64 // what the copies moved per second
}

// MeasureUpload copies size bytes from host memory to device 0 n times and
// reports the rate (the benchmark behind the capacity profiles' PCIe
// figure): from a page-locked block when pinned (what the raw
// sources' direct and resident modes use), else from ordinary pageable
// memory (hwupload). It needs a usable GPU (Probe).
func MeasureUpload(size, n int, pinned bool) (Upload, error) {
	if size <= 0 || n <= 0 {
		return Upload{}, fmt.Errorf("cuda: MeasureUpload(%d, %d): both must be positive", size, n)
	}
	c, err := NewContext(SchedBlockingSync)
	if err != nil {
		return Upload{}, err
	}
	defer c.Close()
	s, err := c.NewStream()
	if err != nil {
		return Upload{}, err
	}
	defer s.Close()
	dev, err := c.Alloc(size)
	if err != nil {
		return Upload{}, err
	}
	defer dev.Free()
	var buf []byte
	if pinned {
		h, err := c.HostAlloc(size, 0)
		if err != nil {
			return Upload{}, err
		}
		defer h.Free()
		buf = h.Bytes()
	} else {
		buf = make([]byte, size)
	}
	for i := range buf { // touch every page, so the copies pay no first faults
		buf[i] = byte(i)
	}
	copies := func(k int) (time.Duration, error) {
		start := time.Now()
		for i := 0; i < k; i++ {
			if err := s.CopyHtoD(dev.Ptr, buf); err != nil {
				return 0, err
			}
		}
		err := s.Synchronize()
		return time.Since(start), err
	}
	if _, err := copies(2); err != nil { // warm up
		return Upload{}, err
	}
	d, err := copies(n)
	if err != nil {
		return Upload{}, err
	}
	return Upload{Bytes: size, Copies: n, Pinned: pinned, BytesPerSec: float64(size) * float64(n) / d.Seconds()}, nil
}
