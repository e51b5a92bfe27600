package compare

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/compare/sweeptest"
	"github.com/xbench/xbench/harness/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestWinnersGolden: the 125m linear forward cells of the standard sweep
// on an H100 and (30% faster) an H200, one pytorch cell failed and one
// triton cell timed in the interpreter: a winner per configuration and
// device, its speed-up over pytorch (the runner-up where pytorch wins),
// never the interpreter's time.
func TestWinnersGolden(t *testing.T) {
	var h100 []result.Result
	for _, r := range sweeptest.Sweep("a") {
		if r.Config.Get("model_size") == "125m" && r.Config.Get("ttt_type") == "linear" && r.Config.Phase == "forward" {
			h100 = append(h100, r)
		}
	}
	rs := append(h100, sweeptest.OnDevice(h100, sweeptest.H200, 0.7, "b")...)
	rs[1].Status, rs[1].Stats = result.StatusFailed, nil
	interp := sweeptest.Scaled(h100[:1], 0.01, "a")[0]
	interp.Backend, interp.Env.Timing = "triton", "time.perf_counter on cpu, kernel in the Triton interpreter (not a performance number)"
	ws := Winners(append(rs, interp), DefaultBaseline([]string{"burnstyle-hip", "pytorch", "triton"}))
	var out strings.Builder
	if err := WriteWinners(&out, ws, "pytorch"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "triton") {
		t.Error("the interpreter's time won")
	}
	path := filepath.Join("testdata", "winners.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if out.String() != string(want) {
		t.Errorf("winners differ from %s:\n--- got\n%s--- want\n%s", path, out.String(), want)
	}
	if DefaultBaseline([]string{"jax", "burnstyle-hip"}) != "burnstyle-hip" || DefaultBaseline(nil) != "" {
		t.Error("DefaultBaseline without pytorch should be the first by name")
	}
}
