package burnstylehip

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
)

func tinyConfig() result.Config {
	return ttt.Config{ModelSize: "tiny", TTTType: "linear", Batch: 1, SeqLen: 32,
		MiniBatch: 16, Dtype: "float32", Backbone: "transformer", Warmup: 1, Repeats: 3}.Result()
}

// set changes parameters of *c, as key, value pairs.
func set(c *result.Config, kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		*c = c.With(kv[i], kv[i+1])
	}
}

func TestInfo(t *testing.T) {
	info, err := New().Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []backend.WorkloadCaps{
		{Workload: "ttt", Phases: []string{"forward", "backward", "inner_only"}, Devices: []string{"cpu", "cuda", "rocm"},
			Values: map[string][]string{"dtype": {"float32", "bfloat16", "float64"}, "ttt_type": {"linear", "mlp"}, "backbone": {"transformer", "mamba"}}},
		{Workload: "gemm", Phases: []string{"forward"}, Devices: []string{"cpu", "cuda", "rocm"},
			Values: map[string][]string{"dtype": {"float32", "tf32", "bfloat16", "float16"}}},
		{Workload: "attention", Phases: []string{"forward", "backward", "both"}, Devices: []string{"cpu", "cuda"},
			Values: map[string][]string{"dtype": {"float32", "bfloat16", "float16"}}, Max: map[string]int64{"head_dim": 256}},
		{Workload: "scan", Phases: []string{"forward", "backward", "both"}, Devices: []string{"cpu", "cuda"},
			Values: map[string][]string{"dtype": {"float32", "float64"}, "semiring": {"log", "max", "entropy"}}},
	}
	if info.Name != "burnstyle-hip" || !reflect.DeepEqual(info.Capabilities.Workloads, want) {
		t.Errorf("info = %+v, want capabilities %+v", info, want)
	}
	var names []string
	for _, v := range info.Variants {
		names = append(names, v.Name)
	}
	if !reflect.DeepEqual(names, []string{"cublaslt", "rocblas", "mma-sync", "wgmma-overlap"}) {
		t.Errorf("variants %v, want cublaslt, rocblas, mma-sync and wgmma-overlap", names)
	}
}

func TestRunUnsupported(t *testing.T) {
	tests := []struct {
		name    string
		device  string
		variant string
		edit    func(*result.Config)
		wantMsg []string
	}{
		{"backward without labels", "cpu", "", func(c *result.Config) { c.Phase = "backward"; set(c, "seq_len", "1", "mini_batch", "1") },
			[]string{"seq_len 1", "no next-token label"}},
		{"phase", "cpu", "", func(c *result.Config) { c.Phase = "both" }, []string{"phase both", "forward, backward, inner_only"}},
		{"bfloat16", "cpu", "", func(c *result.Config) { set(c, "dtype", "bfloat16") }, []string{`dtype "bfloat16"`, "float32, float64"}},
		{"cuda", "cuda", "", func(*result.Config) {}, []string{`device "cuda"`, "not available", "libcuda.so.1"}},
		{"rocm", "rocm", "", func(*result.Config) {}, []string{`device "rocm"`}},
		{"backbone", "cpu", "", func(c *result.Config) { set(c, "backbone", "rwkv") }, []string{"backbone rwkv", "transformer, mamba"}},
		{"variant", "cpu", "compile", func(*result.Config) {}, []string{`variant "compile"`}},
		{"size", "cpu", "", func(c *result.Config) { set(c, "model_size", "7b") }, []string{`"7b"`, "tiny"}},
		{"workload", "cpu", "", func(c *result.Config) { c.Workload = "gpt" }, []string{"workload gpt", "ttt, gemm"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tinyConfig()
			tc.edit(&cfg)
			res, err := New().Run(context.Background(), backend.RunRequest{Device: tc.device, Variant: tc.variant, Config: cfg})
			if err != nil {
				t.Fatalf("Run returned error %v, want an unsupported result", err)
			}
			if res.Status != result.StatusUnsupported || len(res.SamplesMs) != 0 {
				t.Fatalf("status %q, %d samples", res.Status, len(res.SamplesMs))
			}
			for _, want := range tc.wantMsg {
				if !strings.Contains(res.Message, want) {
					t.Errorf("message %q lacks %q", res.Message, want)
				}
			}
			ex, err := New().Export(context.Background(), backend.ExportRequest{Device: tc.device, Variant: tc.variant, Config: cfg,
				WeightsPath: "/nonexistent", InputsPath: "/nonexistent", OutputPath: "/nonexistent"})
			if err != nil || ex.Status != result.StatusUnsupported {
				t.Errorf("Export: %+v, %v; want unsupported", ex, err)
			}
		})
	}
}

func TestRunInvalidIsError(t *testing.T) {
	cfg := tinyConfig().With("seq_len", "40")
	if _, err := New().Run(context.Background(), backend.RunRequest{Device: "cpu", Config: cfg}); err == nil || !strings.Contains(err.Error(), "multiple of mini_batch") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunOK(t *testing.T) {
	tiny, _ := ttt.LookupSize("tiny")
	tests := []struct {
		name       string
		device     string
		edit       func(*result.Config)
		wantParams int64
	}{
		{"forward f32", "cpu", func(*result.Config) {}, ttt.NumParams(tiny, "linear", 16, "transformer")},
		{"forward f64 auto", "auto", func(c *result.Config) { set(c, "dtype", "float64", "ttt_type", "mlp") }, ttt.NumParams(tiny, "mlp", 16, "transformer")},
		{"inner only", "cpu", func(c *result.Config) { c.Phase = "inner_only" }, ttt.NumInnerParams(tiny, "linear", 16)},
		{"mamba", "cpu", func(c *result.Config) { set(c, "backbone", "mamba", "ttt_type", "mlp") }, ttt.NumParams(tiny, "mlp", 16, "mamba")},
		{"backward", "cpu", func(c *result.Config) { c.Phase = "backward" }, ttt.NumParams(tiny, "linear", 16, "transformer")},
		{"backward mamba f64", "cpu", func(c *result.Config) {
			c.Phase = "backward"
			set(c, "backbone", "mamba", "ttt_type", "mlp", "dtype", "float64")
		}, ttt.NumParams(tiny, "mlp", 16, "mamba")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tinyConfig()
			tc.edit(&cfg)
			res, err := New().Run(context.Background(), backend.RunRequest{Workload: "ttt", Device: tc.device, Config: cfg})
			if err != nil || res.Status != result.StatusOK {
				t.Fatalf("Run: %v, status %q %s", err, res.Status, res.Message)
			}
			if len(res.SamplesMs) != cfg.Repeats || res.CompileMs <= 0 {
				t.Errorf("samples %v, compile %g", res.SamplesMs, res.CompileMs)
			}
			if res.NumParams != tc.wantParams || res.PeakMemoryBytes <= 4*tc.wantParams {
				t.Errorf("num_params %d (want %d), peak %d", res.NumParams, tc.wantParams, res.PeakMemoryBytes)
			}
			if res.Device.Kind != "cpu" || res.Device.Name == "" || res.Device.Count != 1 {
				t.Errorf("device %+v", res.Device)
			}
			if res.Backend != "burnstyle-hip" || res.Env.Framework != "go" || res.Env.Versions["go"] == "" || res.Env.Timing == "" || !reflect.DeepEqual(res.Config, cfg) {
				t.Errorf("result fields %+v", res)
			}
		})
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Run(ctx, backend.RunRequest{Device: "cpu", Config: tinyConfig()}); err == nil {
		t.Fatal("Run with a cancelled context: no error")
	}
}

// exportOnce writes weights and inputs for cfg, exports, reads the
// output file and checks it holds exactly the tensors verify grades
// (ttt.Workload.Outputs), in the run's precision, the first (logits or out)
// in its shape and each gradient in its parameter's.
func exportOnce(t *testing.T, dir string, rc result.Config) map[string]tensorfile.Tensor {
	t.Helper()
	cfg := ttt.From(rc)
	s, _ := ttt.LookupSize(cfg.ModelSize)
	w := ttt.PerturbedWeights(s, cfg.TTTType, cfg.MiniBatch, backboneOf(cfg), 4)
	in := map[string]tensorfile.Tensor{"tokens": ttt.RandomTokens(9, cfg.Batch, cfg.SeqLen, s.Vocab)}
	shape := []int{cfg.Batch, cfg.SeqLen, s.Vocab}
	if cfg.InnerOnly {
		in = ttt.RandomInnerInputs(9, cfg.Batch, s.Heads, cfg.SeqLen, s.HeadDim)
		shape = []int{cfg.Batch, s.Heads, cfg.SeqLen, s.HeadDim}
	}
	wp, ip, op := filepath.Join(dir, "w.safetensors"), filepath.Join(dir, "in.safetensors"), filepath.Join(dir, "out.safetensors")
	if err := tensorfile.Write(wp, w); err != nil {
		t.Fatal(err)
	}
	if err := tensorfile.Write(ip, in); err != nil {
		t.Fatal(err)
	}
	resp, err := New().Export(context.Background(), backend.ExportRequest{Workload: "ttt", Device: "cpu", Config: rc, WeightsPath: wp, InputsPath: ip, OutputPath: op})
	if err != nil || resp.Status != result.StatusOK || resp.Device.Kind != "cpu" {
		t.Fatalf("Export: %+v, %v", resp, err)
	}
	got, err := tensorfile.Read(op)
	if err != nil {
		t.Fatal(err)
	}
	names := ttt.Workload{}.Outputs(rc)
	wantDType := tensorfile.DTypeF32
	if cfg.Dtype == "float64" {
		wantDType = tensorfile.DTypeF64
	}
	shapes := map[string][]int{names[0]: shape}
	for _, p := range ttt.Params(s, cfg.TTTType, cfg.MiniBatch, backboneOf(cfg)) {
		shapes[ttt.GradPrefix+p.Name] = p.Shape
	}
	if len(got) != len(names) {
		t.Fatalf("export wrote %d tensors, verify grades %d (%v)", len(got), len(names), names)
	}
	for _, name := range names {
		out, ok := got[name]
		if !ok || out.DType != wantDType || !slices.Equal(out.Shape, shapes[name]) {
			t.Fatalf("output %q: present %v, %s %v, want %s %v", name, ok, out.DType, out.Shape, wantDType, shapes[name])
		}
	}
	return got
}

func TestExport(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*result.Config)
		tol  float64 // float32 against float64, relative L2
	}{
		{"forward linear", func(*result.Config) {}, 1e-5},
		{"forward mlp", func(c *result.Config) { set(c, "ttt_type", "mlp", "batch", "2") }, 1e-5},
		{"forward mamba", func(c *result.Config) { set(c, "backbone", "mamba") }, 1e-5},
		{"inner linear", func(c *result.Config) { c.Phase = "inner_only" }, 1e-5},
		{"inner mlp", func(c *result.Config) { c.Phase = "inner_only"; set(c, "ttt_type", "mlp") }, 1e-5},
		// Gradients: verify's float32 tolerance.
		{"backward linear", func(c *result.Config) { c.Phase = "backward"; set(c, "batch", "2") }, 1e-4},
		{"backward mlp mamba", func(c *result.Config) { c.Phase = "backward"; set(c, "ttt_type", "mlp", "backbone", "mamba") }, 1e-4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tinyConfig()
			tc.edit(&cfg)
			f32 := exportOnce(t, t.TempDir(), cfg)
			again := exportOnce(t, t.TempDir(), cfg)
			set(&cfg, "dtype", "float64")
			f64 := exportOnce(t, t.TempDir(), cfg)
			for name, x := range f32 {
				if string(x.Data) != string(again[name].Data) {
					t.Errorf("%s: two exports of the same inputs differ", name)
				}
				a, _ := x.Float64s()
				b, _ := f64[name].Float64s()
				var d, n float64
				for i := range a {
					d += (a[i] - b[i]) * (a[i] - b[i])
					n += b[i] * b[i]
				}
				if e := math.Sqrt(d / n); e > tc.tol || n == 0 {
					t.Errorf("%s: float32 export differs from float64 by %g relative L2 (|x|^2 %g)", name, e, n)
				}
			}
		})
	}
}

func TestExportBadFiles(t *testing.T) {
	dir := t.TempDir()
	cfg := tinyConfig()
	s, _ := ttt.LookupSize("tiny")
	w := ttt.PerturbedWeights(s, "linear", 16, "transformer", 4)
	delete(w, "layers.1.mlp.w_up")
	wp, ip := filepath.Join(dir, "w.safetensors"), filepath.Join(dir, "in.safetensors")
	_ = tensorfile.Write(wp, w)
	_ = tensorfile.Write(ip, map[string]tensorfile.Tensor{"tokens": ttt.RandomTokens(1, 1, 16, 256)})
	req := backend.ExportRequest{Device: "cpu", Config: cfg, WeightsPath: wp, InputsPath: ip, OutputPath: filepath.Join(dir, "o")}
	if _, err := New().Export(context.Background(), req); err == nil || !strings.Contains(err.Error(), "layers.1.mlp.w_up") {
		t.Errorf("missing weight: err = %v", err)
	}
	req.WeightsPath = filepath.Join(dir, "nope")
	if _, err := New().Export(context.Background(), req); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing file: err = %v", err)
	}
}

// TestManifestListsEveryWorkload: plugin.json's workloads are what the
// harness reads before starting a backend (a workload missing there leaves
// the backend out of verify and run by default), so they must be exactly
// the workloads the backend declares.
func TestManifestListsEveryWorkload(t *testing.T) {
	raw, err := os.ReadFile("plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Workloads []string }
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	info, err := New().Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, w := range info.Capabilities.Workloads {
		declared = append(declared, w.Workload)
	}
	if !reflect.DeepEqual(m.Workloads, declared) {
		t.Errorf("plugin.json lists %v, the backend declares %v", m.Workloads, declared)
	}
}
