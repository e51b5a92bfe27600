package attention_test

import (
	"os"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/emutest"
)

// TestMain keeps the real NVRTC's compiles between runs (emutest.KeepCompiles).
func TestMain(m *testing.M) {
	emutest.KeepCompiles()
	os.Exit(m.Run())
}
