package burnstylehip

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/kernels"
)

// TestAttentionGradRunCPU: backward and both run on the CPU, every dtype,
// with a first call, warmup and the repeats asked for.
func TestAttentionGradRunCPU(t *testing.T) {
	for _, phase := range []string{"backward", "both"} {
		for _, dt := range []string{"float32", "bfloat16", "float16"} {
			cfg := attnConfig("dtype", dt)
			cfg.Phase = phase
			res, err := New().Run(context.Background(), backend.RunRequest{Workload: "attention", Device: "cpu", Config: cfg})
			if err != nil || res.Status != result.StatusOK {
				t.Fatalf("%s %s: %v, status %s %q", phase, dt, err, res.Status, res.Message)
			}
			if len(res.SamplesMs) != 3 || res.CompileMs <= 0 || res.PeakMemoryBytes <= 0 || res.Device.Kind != "cpu" {
				t.Errorf("%s %s: %+v", phase, dt, res)
			}
		}
	}
}

// TestAttentionGradExportCPU: the backward phases read q, k, v and dout and
// write out, dq, dk, dv in the workload's shapes, equal to package cpu's
// gradients at the dtype (their numerics are checked in package cpu and by
// xbench verify against the float64 reference).
func TestAttentionGradExportCPU(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = 2*r.Float32() - 1
		}
		return x
	}
	for _, tc := range []struct{ phase, dtype, kvLen, causal string }{
		{"backward", "float32", "53", "false"}, {"both", "bfloat16", "0", "true"}, {"backward", "float16", "0", "true"},
	} {
		cfg := attnConfig("dtype", tc.dtype, "kv_len", tc.kvLen, "causal", tc.causal)
		cfg.Phase = tc.phase
		s := kernels.AttentionSpec(cfg)
		qs, ks := []int{s.Batch, s.Heads, s.SeqLen, s.HeadDim}, []int{s.Batch, s.KVHeads, s.KVLen, s.HeadDim}
		q, k, v, dout := fill(s.QLen()), fill(s.KLen()), fill(s.KLen()), fill(s.QLen())
		dir := t.TempDir()
		ip, op := filepath.Join(dir, "in.safetensors"), filepath.Join(dir, "out.safetensors")
		in := map[string]tensorfile.Tensor{"q": tensorfile.F32(qs, q), "k": tensorfile.F32(ks, k), "v": tensorfile.F32(ks, v), "dout": tensorfile.F32(qs, dout)}
		if err := tensorfile.Write(ip, in); err != nil {
			t.Fatal(err)
		}
		resp, err := New().Export(context.Background(), backend.ExportRequest{Workload: "attention", Device: "cpu", Config: cfg, InputsPath: ip, OutputPath: op})
		if err != nil || resp.Status != result.StatusOK || resp.Device.Kind != "cpu" {
			t.Fatalf("%+v: Export %+v, %v", tc, resp, err)
		}
		got, err := tensorfile.Read(op)
		if err != nil {
			t.Fatal(err)
		}
		out, dq, dk, dv, _ := cpu.AttentionGradDtype(tc.dtype, s.AttentionShape, q, k, v, dout)
		for name, want := range map[string][]float32{"out": out, "dq": dq, "dk": dk, "dv": dv} {
			shape := qs
			if name == "dk" || name == "dv" {
				shape = ks
			}
			x, ok := got[name]
			if g, _ := x.Float32s(); !ok || !slices.Equal(x.Shape, shape) || !slices.Equal(g, want) {
				t.Errorf("%+v: %s: present %v, shape %v (want %v), or values differ from cpu.AttentionGradDtype", tc, name, ok, x.Shape, shape)
			}
		}
		delete(in, "dout")
		_ = tensorfile.Write(ip, in)
		if resp, err := New().Export(context.Background(), backend.ExportRequest{Workload: "attention", Device: "cpu", Config: cfg, InputsPath: ip, OutputPath: op}); err == nil {
			t.Errorf("%+v: missing dout: %+v, want an error", tc, resp)
		}
	}
}
