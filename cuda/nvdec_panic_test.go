package cuda

import (
	"errors"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
)

// On a decode loop (against the NVDEC stand-in), a decoder whose source
// panics (a hostile stream in its reader or parser) ends alone, told why;
// a housekeeping function that panics is dropped; the loop's other
// decoder decodes every picture and the loop ends as it would have.
func TestNVDECLoopSurvivesAPanic(t *testing.T) {
	n := useFakeNVDEC(t)
	loop, err := n.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	before := panics.Recovered()
	good := toySource(toyStream(64, 48, 8, 10, 0), 1)
	calls := 0
	bad := func() (NVDECUnit, error) {
		if calls++; calls == 3 {
			panic("a hostile stream")
		}
		return good()
	}
	var frames [2]int
	ends := [2]chan error{make(chan error, 1), make(chan error, 1)}
	for i, src := range []NVDECSource{bad, toySource(toyStream(64, 48, 8, 10, 0), 1)} {
		d, err := n.NewDecoder(NVDECConfig{ID: []string{"bad", "good"}[i], Codec: NVDECH264, Format: frame.NV12, Width: 64, Height: 48,
			Source:  src,
			OnFrame: func(f *Frame, _ NVDECPicture) { f.Release(); frames[i]++ },
			OnEnd:   func(err error) { ends[i] <- err }})
		if err != nil {
			t.Fatal(err)
		}
		loop.Add(d)
	}
	every := 0
	loop.Every(func() bool { every++; panic("housekeeping") })
	if err := loop.Run(); err != nil {
		t.Fatalf("the loop: %v", err)
	}
	if err := <-ends[0]; !errors.As(err, new(*panics.Error)) {
		t.Errorf("the panicking decoder ended with %v, want its panic", err)
	}
	if err := <-ends[1]; err != nil || frames[1] != 10 {
		t.Errorf("the other decoder: %d pictures, ended with %v", frames[1], err)
	}
	if every != 1 {
		t.Errorf("a housekeeping function that panicked ran %d times", every)
	}
	if got := panics.Recovered() - before; got != 2 {
		t.Errorf("%d panics counted, want 2", got)
	}
}
