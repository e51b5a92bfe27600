package burnstylehip

import (
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"
)

// gpuEngine plugs package gpu (CUDA or HIP from plain Go, fused inner-loop
// kernels) into the seam; only Prepare needs wrapping, for its job type.
type gpuEngine struct{ *gputtt.Engine }

var (
	_ engine         = gpuEngine{}
	_ deviceTimedJob = (*gputtt.Job)(nil)
	_ outputsJob     = (*gputtt.Job)(nil) // the training step's logits and grad.<param>
)

func (e gpuEngine) Prepare(cfg ttt.Config, s ttt.Size, w, in map[string]tensorfile.Tensor) (job, error) {
	j, err := e.Engine.Prepare(cfg, s, w, in)
	if err != nil {
		return nil, err
	}
	return j, nil
}

// gpuFactory opens the device of kind once per process (gpu.Shared).
func gpuFactory(kind string) engineFactory {
	return func() (engine, error) {
		e, err := gputtt.NewEngine(kind)
		if err != nil {
			return nil, err
		}
		return gpuEngine{e}, nil
	}
}
