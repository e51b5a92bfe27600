package attention

import (
	"context"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// WGMMAKeyRows is the wgmma kernel's k/v tile for s (wgmmaTiles): the GPU
// debug check needs it to know which keys the first tile holds.
func WGMMAKeyRows(s Spec) int { return s.wgmmaTiles().BN }

// ExportGradLSE is ExportGrad plus the rows' saved lse ([B, H, S] float32,
// log2 units as xa_lse; poisoned with NaN first) and the build that ran
// (the forward that saved it, then the backward).
func ExportGradLSE(d *gpu.Device, spec Spec, q, k, v, dout []float32) (out, dq, dk, dv, lse []float32, build string, err error) {
	e, err := exportGrad(context.Background(), d, spec, q, k, v, dout)
	return e.out, e.dq, e.dk, e.dv, e.lse, e.build, err
}
