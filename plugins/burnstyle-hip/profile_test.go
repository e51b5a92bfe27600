package burnstylehip

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/plugin"
	"github.com/xbench/xbench/harness/profile"
	"github.com/xbench/xbench/harness/result"
)

// overGRPC is the real backend behind the real plugin layer, in-process.
func overGRPC(t *testing.T) backend.Profiler {
	t.Helper()
	client, _ := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{plugin.PluginName: &plugin.GRPCBackendPlugin{Impl: New()}})
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(plugin.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(backend.Profiler)
}

func TestProfileCPUOverGRPC(t *testing.T) {
	p := overGRPC(t)
	for _, phase := range []string{"forward", "inner_only"} {
		cfg := tinyConfig()
		cfg.Phase = phase
		path := filepath.Join(t.TempDir(), "trace.json")
		rep, err := p.Profile(context.Background(), backend.ProfileRequest{Workload: "ttt", Device: "cpu", Config: cfg, Calls: 2, TracePath: path})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Status != result.StatusOK || rep.TimeKind != backend.TimeHost || rep.Calls != 2 || rep.TracePath != path || rep.WallMs <= 0 {
			t.Fatalf("%s: report %+v", phase, rep)
		}
		got := map[string]backend.KernelTime{}
		var sum float64
		for _, k := range rep.Kernels {
			got[k.Name] = k
			sum += k.SelfMs
		}
		if phase == "forward" {
			// tiny has 2 layers: 4 gemm phases each, and the head.
			if got["gemm"].Count != 2*(2*4+1) || got["ttt_inner"].Count != 2*2 || got["embed"].Count != 2 {
				t.Errorf("forward phases %+v", rep.Kernels)
			}
		} else if len(rep.Kernels) != 1 || got["ttt_inner"].Count != 2 {
			t.Errorf("inner-only phases %+v", rep.Kernels)
		}
		if sum > rep.WallMs*1.01 {
			t.Errorf("%s: phases sum to %.3f ms, more than the wall %.3f ms of the calls", phase, sum, rep.WallMs)
		}
		if n, err := profile.CheckTrace(path); err != nil || n != int(sumCounts(rep.Kernels)) {
			t.Errorf("%s: trace has %d events (%v), want one per phase", phase, n, err)
		}
	}
}

func sumCounts(ks []backend.KernelTime) (n int64) {
	for _, k := range ks {
		n += k.Count
	}
	return n
}

func TestProfileRefusals(t *testing.T) {
	n, path := New(), filepath.Join(t.TempDir(), "t.json")
	// Only the ttt workload records phases; the kernel workloads are
	// answered from their entry of the workload table.
	for _, c := range []result.Config{
		{Workload: "gemm", Phase: "forward", Params: map[string]string{"m": "8", "n": "8", "k": "8", "batch": "1", "layout": "nn", "dtype": "float32"}},
		attnConfig("dtype", "float32"),
		{Workload: "scan", Phase: "forward", Params: map[string]string{"dtype": "float32", "semiring": "log"}},
	} {
		rep, err := n.Profile(context.Background(), backend.ProfileRequest{Workload: c.Workload, Device: "cpu", Config: c, Calls: 1, TracePath: path})
		if err != nil || rep.Status != result.StatusUnsupported || !strings.Contains(rep.Message, "ttt workload only") || !strings.Contains(rep.Message, c.Workload) {
			t.Errorf("%s: %+v, %v", c.Workload, rep, err)
		}
	}
	cfg := tinyConfig().With("dtype", "bfloat16")
	rep, err := n.Profile(context.Background(), backend.ProfileRequest{Workload: "ttt", Device: "cpu", Config: cfg, Calls: 1, TracePath: path})
	if err != nil || rep.Status != result.StatusUnsupported || !strings.Contains(rep.Message, "bfloat16") {
		t.Errorf("bfloat16 on cpu: %+v, %v", rep, err)
	}
	if _, err := n.Profile(context.Background(), backend.ProfileRequest{Workload: "ttt", Device: "cpu", Config: tinyConfig(), Calls: 0, TracePath: path}); err == nil {
		t.Error("zero calls was accepted")
	}
	if _, err := n.Profile(context.Background(), backend.ProfileRequest{Workload: "ttt", Device: "cpu", Config: tinyConfig(), Calls: 1, TracePath: "rel.json"}); err == nil {
		t.Error("a relative trace path was accepted")
	}
}
