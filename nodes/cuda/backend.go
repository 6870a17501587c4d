package cuda

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/nodes/show"
)

// Probe says whether a GPU is usable here.
func Probe() (string, error) {
	d, err := cuda.Probe()
	if err != nil {
		return "", fmt.Errorf("no usable GPU: %w", err)
	}
	return "", fmt.Errorf("found %s (CUDA %s), but this build's CUDA backend runs no nodes yet", d.Devices[0].Name, d.VersionString())
}

// Kinds lists the node kinds the CUDA backend runs.
func Kinds() []string { return nil }

// Start runs a plan compiled for the CUDA backend.
func Start(ctx context.Context, p *plan.Plan, planJSON []byte, opts show.Options, log *slog.Logger) (show.Running, error) {
	return nil, fmt.Errorf("the CUDA backend runs no nodes yet")
}
