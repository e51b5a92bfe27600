package ttt_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

// TestClusterExchangeNVRTC compiles the cluster kernel at each exchange
// (inner_cluster.cuh: the st.async, mbarrier and mapa PTX of 3 included)
// with the real NVRTC for sm_90 when XBENCH_LIBNVRTC names it, at the shape
// gpucheck times, and fails on a compile error or a spill in the kernel.
func TestClusterExchangeNVRTC(t *testing.T) {
	if os.Getenv("XBENCH_LIBNVRTC") == "" {
		t.Skip("set XBENCH_LIBNVRTC to a libnvrtc.so to compile the cluster kernel for sm_90")
	}
	t.Parallel()
	for _, x := range []int{1, 2, 3} {
		for _, cs := range []int{4, 8} {
			cfg := check.Config("125m", "linear", "float32", true, 1, 2048)
			log, err := gputtt.CompileReport(cfg, gputtt.Options{InnerVariant: 3, ClusterSize: cs, Exchange: x}, "sm_90")
			name := fmt.Sprintf("exchange %d cluster %d", x, cs)
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, log)
			}
			if sp := spills(log); !strings.Contains(log, "xb_inner_linear_cl") || sp["xb_inner_linear_cl"] {
				t.Errorf("%s: no cluster kernel in the report, or it spills:\n%s", name, log)
			}
			t.Logf("%s:\n%s", name, kernelLines(log, "xb_inner_linear_cl"))
		}
	}
}

// kernelLines is the part of a ptxas report about kernel fn.
func kernelLines(log, fn string) string {
	var b strings.Builder
	on := false
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "Function properties for ") || strings.Contains(line, "Compiling entry function") {
			on = strings.Contains(line, fn)
		}
		if on {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
