package cli

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	_ "github.com/xbench/xbench/harness/workload/all"
)

// A single-kernel workload (gemm) is timed cold unless the command line
// says otherwise; a model (ttt) stays warm unless asked.
func TestColdCacheDefaultsByWorkload(t *testing.T) {
	cases := []struct {
		workload string
		args     []string
		want     result.Mode
	}{
		{"gemm", nil, result.Mode{ColdCache: true}},
		{"gemm", []string{"--cold-cache=false"}, result.Mode{}},
		{"gemm", []string{"--cuda-graph"}, result.Mode{ColdCache: true, CUDAGraph: true}},
		{"ttt", nil, result.Mode{}},
		{"ttt", []string{"--cold-cache"}, result.Mode{ColdCache: true}},
		{"problem", nil, result.Mode{ColdCache: true}}, // KernelBench writes 256 MiB before every trial
		{"problem", []string{"--cold-cache=false"}, result.Mode{}},
		{"attention", nil, result.Mode{ColdCache: true}},
	}
	for _, c := range cases {
		wl, err := workload.Lookup(c.workload)
		if err != nil {
			t.Fatal(err)
		}
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var m modeFlags
		m.register(fs, wl)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if got := m.mode(); got != c.want {
			t.Errorf("%s %v: mode %+v, want %+v", c.workload, c.args, got, c.want)
		}
	}
}
