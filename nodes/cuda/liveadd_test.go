package cuda_test

import (
	"context"
	"log/slog"
	"os"
	"testing"

	"github.com/onairhq/onair/internal/showtest"
	nodecuda "github.com/onairhq/onair/nodes/cuda"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// TestSourcesAddedOnAirAreCleanOnTheGPU: showtest.AddSourcesOnAir on the
// CUDA backend: a test pattern and a looped raw file added on air (their
// uploads on the GPU), with their scenes and an AUX route, show every
// frame in order from each bus's cut, with no underrun, drop or repeat.
func TestSourcesAddedOnAirAreCleanOnTheGPU(t *testing.T) {
	needGPU(t)
	showtest.AddSourcesOnAir(t, &nodecuda.Lowering, func(p *plan.Plan, dir string) show.Running {
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		s, err := nodecuda.Start(context.Background(), p, nil, show.Options{BaseDir: dir}, log)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
