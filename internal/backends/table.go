package backends

import (
	"context"
	"log/slog"

	"github.com/onairhq/onair/nodes/cpu"
	nodecuda "github.com/onairhq/onair/nodes/cuda"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// table is the backends, in the order -backend auto tries them.
var table = []*Backend{
	{
		Name:     nodecuda.Name,
		Doc:      "The GPU: NVDEC, uploads in the four raw_upload modes, the CUDA compositor; the NVIDIA driver is loaded at run time.",
		Lowering: &nodecuda.Lowering,
		Probe:    nodecuda.Probe,
		Device:   nodecuda.DeviceName,
		Start: func(ctx context.Context, p *plan.Plan, planJSON []byte, opts show.Options, log *slog.Logger) (show.Running, error) {
			return running(nodecuda.Start(ctx, p, planJSON, opts, log))
		},
		Kinds: nodecuda.Kinds,
	},
	{
		Name:     cpu.Name,
		Doc:      "The embedded CPU backend: test_pattern, raw_file, and hevc_file and h264_file sources decoded by ffmpeg; the compositor in Go; the reference the GPU is checked against.",
		Lowering: &cpu.Lowering,
		Probe:    func() (string, error) { return "the embedded CPU backend", nil },
		Start: func(ctx context.Context, p *plan.Plan, planJSON []byte, opts show.Options, log *slog.Logger) (show.Running, error) {
			return running(show.Start(ctx, cpu.Backend(), p, planJSON, opts, log))
		},
		Kinds: func() []string { return show.Kinds(cpu.Backend()) },
	},
}

// running turns a backend's show into a Running, and a failed start into a
// nil interface (not an interface holding a nil pointer).
func running[S show.Running](s S, err error) (show.Running, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}
