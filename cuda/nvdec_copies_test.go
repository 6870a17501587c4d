package cuda

import (
	"crypto/md5"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media/es"
)

// TestNVDECLoopOnIsByteExact: a loop on a stream of the shared loader's
// Context (NewLoopOn, as the CUDA backend makes them) decodes into
// FramePools with the copy kernel of that Context's module — NVDEC's
// context and the Context are the device's primary context, one CUcontext
// — and every frame is ffmpeg's, byte for byte, twice over.
func TestNVDECLoopOnIsByteExact(t *testing.T) {
	n := openNVDEC(t)
	defer n.Close()
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
	dl, err := ctx.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer dl.Close()
	loop := n.NewLoopOn(s)
	mode, why := loop.CopyMode()
	if want := "batch"; os.Getenv(NVDECCopyEnv) != "each" && mode != want {
		t.Fatalf("the loop copies %q (%v), want %q", mode, why, want)
	}
	ref := nvdecReference(t)
	type result struct {
		sums []string
		end  error
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	results := make([]*result, len(nvdecClips))
	var pools []*FramePool
	for i, c := range nvdecClips {
		r, err := es.Open(filepath.Join(nvdecMedia(), c.name), 0)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		pool, err := NewFramePool(ctx, c.format, 640, 360, 4)
		if err != nil {
			t.Fatal(err)
		}
		pools = append(pools, pool)
		res := &result{}
		results[i] = res
		host, _ := frame.New(c.format, 640, 360)
		wg.Add(1)
		d, err := n.NewDecoder(NVDECConfig{
			ID: c.name, Codec: c.codec, Format: c.format, Width: 640, Height: 360, Source: esSource(r, 2),
			DisplayDelay: i % 3, PoolFrames: 4, Frames: pool,
			OnFrame: func(fr *Frame, _ NVDECPicture) {
				defer fr.Release()
				if err := fr.Download(dl, host); err != nil {
					t.Error(err)
					return
				}
				sum := md5.Sum(host.Bytes())
				mu.Lock()
				res.sums = append(res.sums, hex.EncodeToString(sum[:]))
				mu.Unlock()
			},
			OnEnd: func(err error) {
				mu.Lock()
				res.end = err
				mu.Unlock()
				wg.Done()
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		loop.Add(d)
	}
	ran := make(chan error, 1)
	go func() { ran <- loop.Run() }()
	wg.Wait() // a loop of NewLoopOn runs until stopped
	loop.Stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	for _, p := range pools {
		p.Close()
	}
	st := loop.Stats()
	t.Logf("copies %s: %d pictures in %d rounds, %d launches of the copy kernel", mode, st.Frames, st.Rounds, st.CopyLaunches)
	for i, c := range nvdecClips {
		res, want := results[i], ref[c.name]
		if res.end != nil {
			t.Errorf("%s: %v", c.name, res.end)
		}
		checkTwoPasses(t, c.name, res.sums, want)
	}
}
