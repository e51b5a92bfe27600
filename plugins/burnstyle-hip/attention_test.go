package burnstylehip

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/kernels"
)

// attnConfig is a handcrafted attention configuration as the harness sends
// it: strings, kv_len 0 meaning seq_len.
func attnConfig(kv ...string) result.Config {
	c := result.Config{Workload: "attention", Phase: "forward", Warmup: 1, Repeats: 3, Params: map[string]string{
		"batch": "2", "heads": "4", "kv_heads": "2", "seq_len": "37", "kv_len": "0", "head_dim": "16",
		"causal": "true", "dtype": "bfloat16"}}
	set(&c, kv...)
	return c
}

func TestAttentionSpecResolvesDefaults(t *testing.T) {
	s := kernels.AttentionSpec(attnConfig("kv_heads", "0", "causal", "false", "dtype", "float16"))
	want := cpu.AttentionShape{Batch: 2, Heads: 4, KVHeads: 4, SeqLen: 37, KVLen: 37, HeadDim: 16}
	if s.AttentionShape != want || s.Dtype != "float16" {
		t.Errorf("spec %+v, want %+v float16", s, want)
	}
	if s := kernels.AttentionSpec(attnConfig("kv_len", "53")); s.KVLen != 53 || s.KVHeads != 2 || !s.Causal {
		t.Errorf("spec %+v", s)
	}
}

func TestAttentionRunCPU(t *testing.T) {
	for _, cold := range []bool{false, true} {
		cfg := attnConfig()
		res, err := New().Run(context.Background(), backend.RunRequest{Workload: "attention", Device: "cpu", Config: cfg, Mode: result.Mode{ColdCache: cold}})
		if err != nil || res.Status != result.StatusOK {
			t.Fatalf("cold=%v: %v, status %s %q", cold, err, res.Status, res.Message)
		}
		if len(res.SamplesMs) != 3 || res.CompileMs <= 0 || res.PeakMemoryBytes < 4*(2*2*4*37*16) || res.Device.Kind != "cpu" ||
			strings.Contains(res.Env.Timing, "host buffer") != cold || !res.Mode.ColdCache == cold {
			t.Errorf("cold=%v: %+v", cold, res)
		}
	}
}

func TestAttentionUnsupported(t *testing.T) {
	tests := []struct {
		name, device string
		cfg          result.Config
		want         string
	}{
		{"float64", "cpu", attnConfig("dtype", "float64"), "dtype float64"},
		{"head_dim", "cpu", attnConfig("head_dim", "512"), "head_dim 512 is above"},
		{"rocm", "rocm", attnConfig(), "attention on rocm is not supported"},
	}
	if _, err := gpu.Shared("cuda"); err != nil { // no GPU here: cuda is declared but not available
		tests = append(tests, struct {
			name, device string
			cfg          result.Config
			want         string
		}{"cuda", "cuda", attnConfig(), `device "cuda" is not available`})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := New().Run(context.Background(), backend.RunRequest{Workload: "attention", Device: tc.device, Config: tc.cfg})
			if err != nil || res.Status != result.StatusUnsupported || len(res.SamplesMs) != 0 || !strings.Contains(res.Message, tc.want) {
				t.Errorf("Run: %v, status %s %q; want unsupported naming %q", err, res.Status, res.Message, tc.want)
			}
			ex, err := New().Export(context.Background(), backend.ExportRequest{Workload: "attention", Device: tc.device, Config: tc.cfg,
				WeightsPath: "/nonexistent", InputsPath: "/nonexistent", OutputPath: "/nonexistent"})
			if err != nil || ex.Status != result.StatusUnsupported || !strings.Contains(ex.Message, tc.want) {
				t.Errorf("Export: %+v, %v; want unsupported naming %q", ex, err, tc.want)
			}
		})
	}
}

func TestAttentionInvalidIsError(t *testing.T) {
	cfg := attnConfig("kv_heads", "3")
	if _, err := New().Run(context.Background(), backend.RunRequest{Device: "cpu", Config: cfg}); err == nil || !strings.Contains(err.Error(), "kv_heads 3 does not divide heads 4") {
		t.Errorf("Run: err = %v", err)
	}
	if _, err := New().Export(context.Background(), backend.ExportRequest{Device: "cpu", Config: cfg}); err == nil || !strings.Contains(err.Error(), "kv_heads 3") {
		t.Errorf("Export: err = %v", err)
	}
}

// TestAttentionExportCPU: fixtures named q, k, v in, out back as F32
// [batch, heads, seq_len, head_dim], equal to package cpu's forward on the
// resolved shape (the numerics are checked in package cpu and gpu).
func TestAttentionExportCPU(t *testing.T) {
	for _, dt := range []string{"float32", "bfloat16", "float16"} {
		cfg := attnConfig("dtype", dt, "kv_len", "53", "causal", "false")
		s := kernels.AttentionSpec(cfg)
		r := rand.New(rand.NewPCG(5, 6))
		fill := func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = 4*r.Float32() - 2
			}
			return x
		}
		q, k, v := fill(s.QLen()), fill(s.KLen()), fill(s.KLen())
		dir := t.TempDir()
		ip, op := filepath.Join(dir, "in.safetensors"), filepath.Join(dir, "out.safetensors")
		in := map[string]tensorfile.Tensor{"q": tensorfile.F32([]int{2, 4, 37, 16}, q),
			"k": tensorfile.F32([]int{2, 2, 53, 16}, k), "v": tensorfile.F32([]int{2, 2, 53, 16}, v)}
		if err := tensorfile.Write(ip, in); err != nil {
			t.Fatal(err)
		}
		resp, err := New().Export(context.Background(), backend.ExportRequest{Workload: "attention", Device: "cpu", Config: cfg, InputsPath: ip, OutputPath: op})
		if err != nil || resp.Status != result.StatusOK || resp.Device.Kind != "cpu" {
			t.Fatalf("%s: Export %+v, %v", dt, resp, err)
		}
		got, err := tensorfile.Read(op)
		if err != nil {
			t.Fatal(err)
		}
		out, ok := got["out"]
		if !ok || len(got) != 1 || out.DType != tensorfile.DTypeF32 || !slices.Equal(out.Shape, []int{2, 4, 37, 16}) {
			t.Fatalf("%s: output %d tensors, out %s %v", dt, len(got), out.DType, out.Shape)
		}
		want, _ := cpu.AttentionDtype(dt, s.AttentionShape, q, k, v)
		if g, _ := out.Float32s(); !slices.Equal(g, want) {
			t.Errorf("%s: exported out differs from cpu.AttentionDtype", dt)
		}
		delete(in, "v")
		_ = tensorfile.Write(ip, in)
		if _, err := New().Export(context.Background(), backend.ExportRequest{Device: "cpu", Config: cfg, InputsPath: ip, OutputPath: op}); err == nil || !strings.Contains(err.Error(), `tensor "v"`) {
			t.Errorf("%s: missing v: err = %v", dt, err)
		}
	}
}
