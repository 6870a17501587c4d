package cuda

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// copyCase is a table of copies between two buffers, as offsets: the
// regions' sources and destinations at every alignment the kernel tells
// apart (16, 8, 4, 2 and 1 bytes), widths that are and are not multiples
// of them, rows over several row blocks, and gaps between destinations in
// which nothing may be written.
type copyCase struct {
	name             string
	srcSize, dstSize int
	regions          []CopyRegion // Src and Dst offsets into the buffers
}

func copyCases() []copyCase {
	rng := rand.New(rand.NewSource(7))
	aligns := []int{16, 8, 4, 2, 1, 256}
	gen := func(name string, n int, frameLike bool) copyCase {
		c := copyCase{name: name}
		for i := 0; i < n; i++ {
			var r CopyRegion
			if frameLike { // a picture: 16-byte aligned, pitches multiples of 256
				r.Width, r.Rows = 64*(1+rng.Intn(30)), 48+rng.Intn(100)
				r.SrcPitch, r.DstPitch = (r.Width+511)&^511, (r.Width+255)&^255
			} else {
				a := aligns[rng.Intn(len(aligns))]
				r.Width, r.Rows = 1+rng.Intn(300), 1+rng.Intn(90)
				if rng.Intn(2) == 0 {
					r.Width = (r.Width + a - 1) / a * a
				}
				r.SrcPitch = (r.Width + rng.Intn(40) + a - 1) / a * a
				r.DstPitch = (r.Width + rng.Intn(40) + a - 1) / a * a
				c.srcSize = (c.srcSize + a - 1) / a * a
				c.dstSize = (c.dstSize + a - 1) / a * a
			}
			c.srcSize, c.dstSize = (c.srcSize+255)&^255+16*rng.Intn(2), (c.dstSize+255)&^255+16*rng.Intn(2)
			if !frameLike {
				c.srcSize += rng.Intn(17)
				c.dstSize += rng.Intn(17)
			}
			r.Src, r.Dst = DevicePtr(c.srcSize), DevicePtr(c.dstSize)
			c.srcSize += r.SrcPitch*r.Rows + 64
			c.dstSize += r.DstPitch*r.Rows + 64
			c.regions = append(c.regions, r)
		}
		return c
	}
	cases := []copyCase{gen("5 mixed", 5, false), gen("8 mixed", 8, false), gen("150 mixed", 150, false), gen("3 pictures", 3, true), gen("200 pictures", 200, true)}
	// A 1080p NV12 picture, both planes as one region.
	hd := copyCase{name: "1080p", srcSize: 2048 * 1632, dstSize: 2048 * 1620,
		regions: []CopyRegion{{Src: 0, Dst: 0, SrcPitch: 2048, DstPitch: 2048, Width: 1920, Rows: 1620}}}
	return append(cases, hd)
}

// want is what the destination holds after the copies: dst with every
// region's rows written, nothing else.
func (c copyCase) want(src, dst []byte) []byte {
	w := bytes.Clone(dst)
	for _, r := range c.regions {
		for y := 0; y < r.Rows; y++ {
			copy(w[int(r.Dst)+y*r.DstPitch:int(r.Dst)+y*r.DstPitch+r.Width], src[int(r.Src)+y*r.SrcPitch:])
		}
	}
	return w
}

// at is the table with the offsets made addresses in buffers at src and dst.
func (c copyCase) at(src, dst DevicePtr) []CopyRegion {
	rs := make([]CopyRegion, len(c.regions))
	for i, r := range c.regions {
		r.Src += src
		r.Dst += dst
		rs[i] = r
	}
	return rs
}

func fillRandom(b []byte, seed int64) {
	rand.New(rand.NewSource(seed)).Read(b)
}

func checkCopied(t *testing.T, name string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: byte %d of the destination is %d, want %d", name, i, got[i], want[i])
			return
		}
	}
}

// TestCopyKernelOnTheHost runs the copy kernel's code on the CPU over the
// grid of its launches: every region copied byte for byte, nothing else
// written.
func TestCopyKernelOnTheHost(t *testing.T) {
	for i, c := range copyCases() {
		src, dst := hostBytes(c.srcSize), hostBytes(c.dstSize)
		fillRandom(src, int64(i))
		fillRandom(dst, int64(i+100))
		want := c.want(src, dst)
		if err := hostCopyRegions(c.at(hostPtr(src), hostPtr(dst))); err != nil {
			t.Fatal(err)
		}
		checkCopied(t, c.name, dst, want)
		freeHostBytes(src)
		freeHostBytes(dst)
	}
}

// TestCopyKernelOnTheGPU: nvcc's build of the same code does the same.
func TestCopyKernelOnTheGPU(t *testing.T) {
	if _, err := Probe(); err != nil {
		t.Skipf("no usable GPU (cuda): %v", err)
	}
	ctx, err := NewContext(SchedBlockingSync)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	s, err := ctx.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, c := range copyCases() {
		src, dst := make([]byte, c.srcSize), make([]byte, c.dstSize)
		fillRandom(src, int64(i))
		fillRandom(dst, int64(i+100))
		want := c.want(src, dst)
		dsrc, err := ctx.Alloc(c.srcSize)
		if err != nil {
			t.Fatal(err)
		}
		ddst, err := ctx.Alloc(c.dstSize)
		if err != nil {
			t.Fatal(err)
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(fmt.Errorf("%s: %w", c.name, err))
			}
		}
		must(s.CopyHtoD(dsrc.Ptr, src))
		must(s.CopyHtoD(ddst.Ptr, dst))
		must(s.copyRegions(c.at(dsrc.Ptr, ddst.Ptr)))
		got := make([]byte, c.dstSize)
		must(s.CopyDtoH(got, ddst.Ptr))
		must(s.Synchronize())
		checkCopied(t, c.name, got, want)
		dsrc.Free()
		ddst.Free()
	}
}
