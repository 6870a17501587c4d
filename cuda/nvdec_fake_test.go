package cuda

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/onairhq/onair/frame"
)

// useFakeNVDEC builds testdata/fake_nvdec.c (a stand-in for the driver
// and its NVDEC library, with a toy bitstream) into the driver stand-in,
// makes it the process's driver and has OpenNVDEC load it on a Context of
// it, so the decode loop's logic — round robin, the display queue, pools
// that run dry, the end of a stream, refusals — is tested on every
// machine.
func useFakeNVDEC(t *testing.T) *NVDEC {
	t.Helper()
	lib := useFakeDriver(t, "testdata/fake_nvdec.c")
	saved := nvdecLibrary
	nvdecLibrary = lib
	t.Cleanup(func() { nvdecLibrary = saved })
	ctx, err := NewContext(SchedBlockingSync)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	n, err := OpenNVDEC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}

// decoded is a decoded frame and what the decoder said of it, as a test
// holds them.
type decoded struct {
	*Frame
	NVDECPicture
}

// download copies a decoded frame into host on a stream of its own, as a
// reader of the frame does.
func download(f *Frame, host *frame.Frame) error {
	s, err := f.ctx.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	return f.Download(s, host)
}

// toyStream is a toy bitstream's access units: a sequence header with the
// first picture, then one picture each; after change pictures, a sequence
// header of another size.
func toyStream(w, h, depth, pictures, change int) [][]byte {
	seq := func(w, h int) []byte {
		return []byte{0, 0, 1, 'S', byte(w >> 8), byte(w), byte(h >> 8), byte(h), byte(depth)}
	}
	var aus [][]byte
	for i := 0; i < pictures; i++ {
		var au []byte
		if i == 0 {
			au = seq(w, h)
		}
		if change > 0 && i == change {
			au = seq(w/2, h/2)
		}
		aus = append(aus, append(au, 0, 0, 1, 'P', byte(i)))
	}
	return aus
}

func toySource(aus [][]byte, passes int) NVDECSource {
	i := 0
	return func() (NVDECUnit, error) {
		if i >= passes*len(aus) {
			return NVDECUnit{}, io.EOF
		}
		au := aus[i%len(aus)]
		i++
		return NVDECUnit{Data: au, Timestamp: int64(i - 1)}, nil
	}
}

// checkToyPicture checks a downloaded picture is toy picture n, cropped
// from the top left of its coded surface: every sample of both planes.
func checkToyPicture(f *frame.Frame, n int) error {
	for plane, rows := range []int{f.Height, f.Height / 2} {
		for y := 0; y < rows; y++ {
			for x := 0; x < f.Width; x++ {
				want := (n + x + 2*y) & 255
				if plane == 1 {
					want = (n + 7 + x + y) & 255
				}
				var got int
				if f.Format == frame.P010 {
					got = int(f.Plane16(plane)[y*f.Pitch[plane]/2+x] >> 6)
				} else {
					got = int(f.Data[plane][y*f.Pitch[plane]+x])
				}
				if got != want {
					return fmt.Errorf("plane %d (%d,%d) is %d, toy picture %d has %d there", plane, x, y, got, n, want)
				}
			}
		}
	}
	return nil
}

// copyModes runs a test once with each way a loop copies pictures
// (NVDECCopyEnv) and checks the loops made took it.
func copyModes(t *testing.T, test func(t *testing.T, check func(*NVDECLoop))) {
	for _, mode := range []string{"batch", "each"} {
		t.Run("copy="+mode, func(t *testing.T) {
			t.Setenv(NVDECCopyEnv, mode)
			test(t, func(l *NVDECLoop) {
				t.Helper()
				got, why := l.CopyMode()
				st := l.Stats()
				if got != mode {
					t.Errorf("the loop copies %q (%v), want %q", got, why, mode)
				}
				if mode == "batch" && st.CopyLaunches <= 0 || mode == "each" && st.CopyLaunches != 0 {
					t.Errorf("copies %s: %d launches of the copy kernel in %d rounds", mode, st.CopyLaunches, st.Rounds)
				}
			})
		})
	}
}

func TestNVDECLoopWithAStandIn(t *testing.T) {
	copyModes(t, testNVDECLoopWithAStandIn)
}

func testNVDECLoopWithAStandIn(t *testing.T, checkCopies func(*NVDECLoop)) {
	n := useFakeNVDEC(t)
	loop, err := n.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	type stream struct {
		name          string
		format        frame.Format
		w, h          int // declared
		sw, sh        int // in the stream
		pictures      int
		passes        int
		change        int
		pool          int
		holdElsewhere bool // frames released by another goroutine, later
		delay         int
		wantErr       string
	}
	streams := []stream{
		{name: "8-bit looped", format: frame.NV12, w: 640, h: 360, sw: 640, sh: 360, pictures: 30, passes: 2, delay: 2},
		{name: "10-bit", format: frame.P010, w: 320, h: 180, sw: 320, sh: 180, pictures: 12, passes: 1},
		{name: "held elsewhere", format: frame.NV12, w: 64, h: 48, sw: 64, sh: 48, pictures: 40, passes: 1, pool: 2, holdElsewhere: true},
		{name: "wrong size", format: frame.NV12, w: 1280, h: 720, sw: 640, sh: 360, pictures: 5, passes: 1,
			wantErr: "the stream is 640x360 8-bit, the source declares 1280x720 8-bit"},
		{name: "changes size", format: frame.NV12, w: 128, h: 96, sw: 128, sh: 96, pictures: 20, passes: 1, change: 10,
			wantErr: "the stream changes to 64x48 8-bit"},
	}
	type result struct {
		frames []int64
		errs   []error
		end    error
		ended  int
	}
	var mu sync.Mutex
	results := make([]*result, len(streams))
	var held sync.WaitGroup
	for i, s := range streams {
		res := &result{}
		results[i] = res
		host, _ := frame.New(s.format, s.w, s.h)
		check := func(f decoded) {
			if err := download(f.Frame, host); err == nil {
				err = checkToyPicture(host, int(f.Timestamp)%s.pictures)
				if err != nil {
					err = fmt.Errorf("frame %d: %w", f.Index, err)
				}
				mu.Lock()
				res.frames = append(res.frames, f.Timestamp)
				if err != nil {
					res.errs = append(res.errs, err)
				}
				mu.Unlock()
			}
		}
		hand := make(chan decoded, 8)
		if s.holdElsewhere {
			held.Add(1)
			go func() {
				defer held.Done()
				for f := range hand {
					check(f)
					f.Release()
				}
			}()
		}
		d, err := n.NewDecoder(NVDECConfig{
			ID: s.name, Codec: NVDECHEVC, Format: s.format, Width: s.w, Height: s.h, PoolFrames: s.pool, DisplayDelay: s.delay,
			Source: toySource(toyStream(s.sw, s.sh, s.format.BitDepth(), s.pictures, s.change), s.passes),
			OnFrame: func(fr *Frame, p NVDECPicture) {
				f := decoded{fr, p}
				if s.holdElsewhere {
					hand <- f
					return
				}
				check(f)
				f.Release()
			},
			OnEnd: func(err error) {
				mu.Lock()
				res.end = err
				res.ended++
				mu.Unlock()
				if s.holdElsewhere {
					close(hand)
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		loop.Add(d)
	}
	if err := loop.Run(); err != nil {
		t.Fatal(err)
	}
	held.Wait()
	checkCopies(loop)
	for i, s := range streams {
		res := results[i]
		if res.ended != 1 {
			t.Errorf("%s: OnEnd called %d times", s.name, res.ended)
		}
		if s.wantErr != "" {
			if res.end == nil || !strings.Contains(res.end.Error(), s.wantErr) || !strings.Contains(res.end.Error(), s.name) {
				t.Errorf("%s: ended with %v, want %q", s.name, res.end, s.wantErr)
			}
			continue
		}
		if res.end != nil {
			t.Errorf("%s: %v", s.name, res.end)
		}
		for _, err := range res.errs[:min(3, len(res.errs))] {
			t.Errorf("%s: %v", s.name, err)
		}
		if len(res.frames) != s.pictures*s.passes {
			t.Errorf("%s: %d frames, want %d", s.name, len(res.frames), s.pictures*s.passes)
		}
		for j, ts := range res.frames {
			if ts != int64(j) {
				t.Errorf("%s: frame %d carries the timestamp of access unit %d", s.name, j, ts)
				break
			}
		}
	}
}

// Stop ends a loop whose decoders would run for ever, and every decoder
// hears of it.
func TestNVDECLoopStops(t *testing.T) {
	n := useFakeNVDEC(t)
	loop, err := n.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	var frames int
	ended := make(chan error, 1)
	d, err := n.NewDecoder(NVDECConfig{ID: "endless", Codec: NVDECH264, Format: frame.NV12, Width: 64, Height: 48,
		Source: toySource(toyStream(64, 48, 8, 10, 0), 1<<30),
		OnFrame: func(f *Frame, _ NVDECPicture) {
			f.Release()
			if frames++; frames == 100 {
				loop.Stop()
			}
		},
		OnEnd: func(err error) { ended <- err }})
	if err != nil {
		t.Fatal(err)
	}
	loop.Add(d)
	if err := loop.Run(); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; err == nil || !strings.Contains(err.Error(), "loop stopped") {
		t.Errorf("OnEnd: %v", err)
	}
	if frames < 100 || frames > 110 {
		t.Errorf("%d frames before the loop stopped", frames)
	}
}

// A loop's Every functions run each round until they return false or are
// cancelled; a cancel returns only once its function is not running, and
// it never runs again.
func TestNVDECLoopEvery(t *testing.T) {
	n := useFakeNVDEC(t)
	loop, err := n.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var selfCalls, slowCalls int
	var inSlow, started bool
	startedCh := make(chan struct{})
	cancelling := make(chan struct{}) // closed as cancel is called
	loop.Every(func() bool {
		mu.Lock()
		defer mu.Unlock()
		selfCalls++
		return selfCalls < 3 // done after the third call
	})
	cancel := loop.Every(func() bool {
		mu.Lock()
		slowCalls++
		inSlow = true
		first := !started
		if first {
			started = true
			close(startedCh)
		}
		mu.Unlock()
		if first {
			<-cancelling // the first call is in progress when cancel comes
		}
		mu.Lock()
		inSlow = false
		mu.Unlock()
		return true
	})
	ran := make(chan error, 1)
	go func() { ran <- loop.Run() }()
	<-startedCh
	close(cancelling)
	cancel()
	mu.Lock()
	if inSlow {
		t.Error("cancel returned while its function ran")
	}
	after := slowCalls
	mu.Unlock()
	// With nothing left to do the loop ends by itself (it made no stream
	// of the shared loader's: NewLoop).
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if slowCalls != after {
		t.Errorf("a cancelled function ran %d more times", slowCalls-after)
	}
	if selfCalls != 3 {
		t.Errorf("a function that said it was done ran %d times, want 3", selfCalls)
	}
}

// With NVDECClocksEnv set a loop reports its thread's CPU by NVIDIA call,
// the decode calls inside the parse calls; without it, nothing.
func TestNVDECLoopClocks(t *testing.T) {
	n := useFakeNVDEC(t)
	for _, on := range []bool{false, true} {
		if on {
			t.Setenv(NVDECClocksEnv, "1")
		}
		loop, err := n.NewLoop()
		if err != nil {
			t.Fatal(err)
		}
		frames := 0
		d, err := n.NewDecoder(NVDECConfig{
			ID: "clocked", Codec: NVDECHEVC, Format: frame.NV12, Width: 64, Height: 48,
			Source:  toySource(toyStream(64, 48, 8, 20, 0), 3),
			OnFrame: func(f *Frame, _ NVDECPicture) { frames++; f.Release() },
			OnEnd:   func(error) {},
		})
		if err != nil {
			t.Fatal(err)
		}
		loop.Add(d)
		if err := loop.Run(); err != nil {
			t.Fatal(err)
		}
		st := loop.Stats()
		if frames != 60 || st.Frames != 60 {
			t.Fatalf("clocks %v: %d frames handed, %d counted; want 60", on, frames, st.Frames)
		}
		if !on {
			if st.Clocks || st.ParseCPUNs != 0 || st.MapCPUNs != 0 {
				t.Errorf("clocks off, yet read: %+v", st)
			}
			continue
		}
		if !st.Clocks || st.ParseCPUNs <= 0 || st.MapCPUNs <= 0 || st.CopyCPUNs <= 0 || st.UnmapCPUNs <= 0 || st.StatusCPUNs <= 0 {
			t.Errorf("clocks on, some call not clocked: %+v", st)
		}
		if st.DecodeCPUNs <= 0 || st.DecodeCPUNs > st.ParseCPUNs {
			t.Errorf("decode %d ns of CPU, parse (which makes the decode calls) %d", st.DecodeCPUNs, st.ParseCPUNs)
		}
	}
}

// A loop serving many decoders copies a round's pictures with as many
// launches as its table needs (at most 128 regions a launch): 150
// streams, each picture byte for byte, in both copy modes. Some streams'
// rows are not a multiple of 16 bytes (98 pixels) and some are 10-bit.
func TestNVDECLoopCopiesManyPictures(t *testing.T) {
	copyModes(t, func(t *testing.T, checkCopies func(*NVDECLoop)) {
		n := useFakeNVDEC(t)
		loop, err := n.NewLoop()
		if err != nil {
			t.Fatal(err)
		}
		const streams, pictures = 150, 6
		var mu sync.Mutex
		var bad []error
		frames := make([]int, streams)
		for i := 0; i < streams; i++ {
			f, w, h := frame.NV12, 64, 48
			switch i % 10 {
			case 3:
				w, h = 98, 62
			case 7:
				f, w, h = frame.P010, 96, 54
			}
			host, _ := frame.New(f, w, h)
			d, err := n.NewDecoder(NVDECConfig{
				ID: fmt.Sprintf("s%d", i), Codec: NVDECHEVC, Format: f, Width: w, Height: h, PoolFrames: 2,
				Source: toySource(toyStream(w, h, f.BitDepth(), pictures, 0), 1),
				OnFrame: func(fr *Frame, p NVDECPicture) {
					defer fr.Release()
					err := download(fr, host)
					if err == nil {
						err = checkToyPicture(host, int(p.Timestamp))
					}
					mu.Lock()
					frames[i]++
					if err != nil {
						bad = append(bad, fmt.Errorf("stream %d (%v %dx%d), frame %d: %w", i, f, w, h, p.Index, err))
					}
					mu.Unlock()
				},
				OnEnd: func(err error) {
					if err != nil {
						t.Errorf("stream %d: %v", i, err)
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			loop.Add(d)
		}
		if err := loop.Run(); err != nil {
			t.Fatal(err)
		}
		checkCopies(loop)
		for _, err := range bad[:min(len(bad), 3)] {
			t.Error(err)
		}
		for i, k := range frames {
			if k != pictures {
				t.Errorf("stream %d: %d frames, want %d", i, k, pictures)
			}
		}
		st := loop.Stats()
		t.Logf("%d pictures in %d rounds, %d launches of the copy kernel", st.Frames, st.Rounds, st.CopyLaunches)
		if mode, _ := loop.CopyMode(); mode == "batch" && st.CopyLaunches <= st.Rounds {
			t.Errorf("no round split its copies over two launches (%d launches in %d rounds)", st.CopyLaunches, st.Rounds)
		}
	})
}
