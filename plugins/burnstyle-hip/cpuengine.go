package burnstylehip

import (
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
	cputtt "github.com/xbench/xbench/plugins/burnstyle-hip/cpu/ttt"
)

// cpuEngine plugs package cpu/ttt (this backend's own TTT model on every
// core) into the seam; only Prepare needs wrapping, for its job type.
type cpuEngine struct{ *cputtt.Engine }

var _ engine = cpuEngine{}

func newCPUEngine() (engine, error) { return cpuEngine{cputtt.NewEngine()}, nil }

func (e cpuEngine) Prepare(cfg ttt.Config, s ttt.Size, w, in map[string]tensorfile.Tensor) (job, error) {
	j, err := e.Engine.Prepare(cfg, s, w, in)
	if err != nil {
		return nil, err
	}
	return j, nil
}
