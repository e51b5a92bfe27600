package kernels

import (
	"strings"
	"testing"
)

// A gemm variant asks for its library on the GPU kind that has it, and
// names what it needs elsewhere.
func TestGEMMMode(t *testing.T) {
	for _, tc := range []struct{ variant, kind, want string }{
		{"cublaslt", "rocm", "cublaslt variant needs a CUDA GPU"},
		{"rocblas", "cuda", "rocblas variant needs a ROCm GPU"},
		{"rocblas", "", "rocblas variant needs a ROCm GPU"},
		{"rocblas", "rocm", ""},
		{"", "rocm", ""},
	} {
		m, why := gemmMode(tc.variant, tc.kind)
		if tc.want == "" && why != "" || !strings.Contains(why, tc.want) {
			t.Errorf("gemmMode(%q, %q): %q, want %q", tc.variant, tc.kind, why, tc.want)
		}
		if m.RocBLAS != (tc.variant == "rocblas") || m.Lt != (tc.variant == "cublaslt") {
			t.Errorf("gemmMode(%q, %q) = %+v", tc.variant, tc.kind, m)
		}
	}
	if k := libraryKey("hipblaslt 1.1.0"); k != "hipblaslt" {
		t.Errorf("libraryKey: %q", k)
	}
}
