package gemm_test

import (
	"strings"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/gemm"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/emutest"
)

// TestEmuHIP: on rocm no BLAS library is bound yet (no hipBLASLt binding),
// so gemm must be answered, naming rocm, not attempted.
func TestEmuHIP(t *testing.T) {
	d := emutest.OpenHIP(t, 64)
	if err := gemm.Supports(d, gemm.Spec{Batch: 1, M: 8, N: 8, K: 8, Dtype: "float32"}); err == nil ||
		!strings.Contains(err.Error(), "rocm") {
		t.Errorf("gemm on rocm: %v, want an answer naming rocm (no hipBLASLt binding yet)", err)
	}
}
