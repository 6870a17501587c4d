package cuda_test

import (
	"fmt"
	"testing"

	"github.com/onairhq/onair/cuda"
)

// TestPeerCopyBetweenStandIns: on one GPU, a context of onair's own stands
// in for a second GPU (NewOwnContext); a frame uploaded in the primary
// context and peer-copied into a frame of the other, then back, downloads
// byte for byte as it went up, with its metadata, and every copy and byte
// is counted. The lead runs it on the H200 (TESTING.md, device runs).
func TestPeerCopyBetweenStandIns(t *testing.T) {
	c := gpu(t)
	c2, err := cuda.NewOwnContext(0, cuda.SchedBlockingSync)
	must(t, err)
	t.Cleanup(func() { must(t, c2.Close()) }) // after its streams' cleanups
	there, err := cuda.NewPeer(c, c2)
	must(t, err)
	defer there.Close()
	back, err := cuda.NewPeer(c2, c)
	must(t, err)
	defer back.Close()
	s, s2 := stream(t, c), stream(t, c2)
	var copies, bytes int64
	for _, f := range formats {
		for _, sz := range [][2]int{{1920, 1080}, {98, 62}, {3840, 2160}} {
			name := fmt.Sprintf("%v/%dx%d", f, sz[0], sz[1])
			src := hostFrame(f, sz[0], sz[1], 5, int64(sz[0]))
			a, err := cuda.NewFrame(c, f, sz[0], sz[1])
			must(t, err)
			must(t, a.Upload(s, src))
			b, err := cuda.NewFrame(c2, f, sz[0], sz[1])
			must(t, err)
			must(t, there.Copy(b, a))
			out := hostFrame(f, sz[0], sz[1], 0, 7)
			must(t, b.Download(s2, out))
			if !sameRows(src, out) || out.PTS != src.PTS {
				t.Errorf("%s: the frame differs on the other context (pitches %d, %d)", name, a.Pitch, b.Pitch)
			}
			a2, err := cuda.NewFrame(c, f, sz[0], sz[1])
			must(t, err)
			must(t, back.Copy(a2, b))
			out2 := hostFrame(f, sz[0], sz[1], 3, 8)
			must(t, a2.Download(s, out2))
			if !sameRows(src, out2) {
				t.Errorf("%s: the frame differs after crossing back", name)
			}
			copies++
			bytes += int64(a.Pitch * (sz[1] + sz[1]/2))
			for _, fr := range []*cuda.Frame{a, b, a2} {
				fr.Release()
			}
		}
	}
	for _, p := range []*cuda.Peer{there, back} {
		if n, b := p.Counts(); n != copies || b < bytes {
			t.Errorf("counted %d copies of %d bytes, want %d of at least %d", n, b, copies, bytes)
		}
		if p.GPUTime() <= 0 { // every copy but the latest is timed by now
			t.Errorf("%d copies took no GPU time", copies)
		}
	}
	// A frame of the wrong context is refused, not copied.
	wrong, err := cuda.NewFrame(c, formats[0], 98, 62)
	must(t, err)
	defer wrong.Release()
	if err := there.Copy(wrong, wrong); err == nil {
		t.Error("a copy into a frame of the source's own context was taken")
	}
}
