package cli

import (
	"bytes"
	"testing"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/stats"
)

// A row whose samples are a fallback clock (a framework's own clock on a
// GPU because CUPTI did not load) is marked in the notes and explained
// under the table; a launch-bound row on the framework's clock is not.
func TestRunTableMarksFallbackClock(t *testing.T) {
	row := func(name, timing string, median float64) result.Result {
		return result.Result{Backend: name, Status: result.StatusOK, Device: result.Device{Kind: "cuda", Name: "NVIDIA H100"},
			Env: result.Env{Timing: timing}, Throughput: 1000 / median, ThroughputUnit: "calls/s",
			Stats: &result.Stats{MedianMs: median, CI95LowMs: median * 0.99, CI95HighMs: median * 1.01, SampleCount: 10, CIMethod: stats.MethodOrderStatistic}}
	}
	var b bytes.Buffer
	writeRunTable(&b, []result.Result{
		row("burnstyle-hip", "cupti-kernel-span: ...", 1.0),
		row("pytorch", "cuda-events: torch.cuda events (CUPTI unavailable (No module named 'cupti'))", 1.2),
		row("jax", "host-clock-block: a host clock (launch-bound call, CUPTI tracing off: 4103 kernels/copies)", 2.0),
	}, "")
	golden(t, "run_table_fallback.golden", b.String())

	b.Reset()
	writeRunTable(&b, []result.Result{row("burnstyle-hip", "cupti-kernel-span: ...", 1.0)}, "")
	if bytes.Contains(b.Bytes(), []byte("FALLBACK")) {
		t.Errorf("a device-clock table is marked:\n%s", b.String())
	}
}
