package attention_test

import (
	"os"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/emutest"
)

// TestMain keeps the real NVRTC's compiles between runs (emutest.KeepCompiles).
func TestMain(m *testing.M) {
	emutest.KeepCompiles()
	os.Exit(m.Run())
}

// cudaDevice opens the CUDA device for a GPU test (closed when the test
// ends), or skips it unless XBENCH_REQUIRE_GPU=1, with which a missing GPU
// fails it: the GPU tests run on the device machine (scripts/h100-*.sh),
// CI runs the CPU path.
func cudaDevice(t *testing.T, needs string) *gpu.Device {
	t.Helper()
	if os.Getenv("XBENCH_REQUIRE_GPU") != "1" {
		t.Skip("needs " + needs + ": set XBENCH_REQUIRE_GPU=1")
	}
	d, err := gpu.Open("cuda")
	if err != nil {
		t.Fatalf("XBENCH_REQUIRE_GPU=1 but no CUDA GPU opened: %v", err)
	}
	t.Cleanup(d.Close)
	return d
}
