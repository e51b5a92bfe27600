package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		want Category
	}{
		// torch on a CPU: aten ops
		{"aten::mm", GEMM},
		{"aten::addmm", GEMM},
		{"aten::bmm", GEMM},
		{"aten::linear", GEMM},
		{"aten::copy_", Copies},
		{"aten::_to_copy", Copies},
		{"aten::cat", Copies},
		{"aten::index_select", Copies},
		{"aten::native_layer_norm", Elementwise},
		{"aten::mul", Elementwise},
		{"aten::sigmoid", Elementwise},
		{"aten::softmax", Elementwise},
		{"aten::empty", Other},
		// CUDA kernels
		{"sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32", GEMM},
		{"nvjet_tst_192x192_64x4_1x2_h_bz_coopA_NTN", GEMM},
		{"ampere_sgemm_128x64_nn", GEMM},
		{"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)", GEMM},
		{"fmha_cutlassF_f32_aligned_64x64_rf_sm80", Attention},
		{"flash_fwd_kernel", Attention},
		{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", Elementwise},
		{"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>", Elementwise},
		{"void at::native::reduce_kernel<512, 1>", Elementwise},
		{"void at::native::elementwise_kernel<128, 2, direct_copy_kernel_cuda>", Copies},
		{"Memcpy DtoD (Device -> Device)", Copies},
		{"Memset (Device)", Copies},
		// triton: ours and inductor's
		{"ttt_linear_kernel", Attention},
		{"ttt_mlp_kernel", Attention},
		{"ttt_linear_bwd_chain_kernel", Attention}, // the inner loop's backward
		{"ttt_mlp_bwd_pre_kernel", Attention},
		{"_gemm_kernel", GEMM},
		{"triton_poi_fused_add_mul_0", Elementwise},
		{"triton_red_fused_mean_pow_1", Elementwise},
		{"triton_tem_fused_mm_0", GEMM},
		// XLA, CPU host ops and GPU kernels
		{"dot.12", GEMM},
		{"gemm_fusion_dot_1", GEMM},
		{"loop_multiply_fusion", Elementwise},
		{"fusion.3", Elementwise},
		{"wrapped_transpose", Copies},
		{"dynamic_update_slice_fusion", Copies},
		{"copy.4", Copies},
		{"while.1", Other},
		{"ynn_fusion.30", Other},
		// the native backend's phases
		{"gemm", GEMM},
		{"gemm_qkvg", GEMM},
		{"inner", Attention},
		{"ttt_inner", Attention},
		{"norm", Elementwise},
		{"rms_norm", Elementwise},
		{"swiglu", Elementwise},
		{"embed", Copies},
		// near misses: a word inside another word does not count
		{"summary", Other},
		{"commit", Other},
	}
	for _, tt := range tests {
		if got := Classify(tt.name); got != tt.want {
			t.Errorf("Classify(%q) = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func k(name string, ms float64, n int64) backend.KernelTime {
	return backend.KernelTime{Name: name, SelfMs: ms, Count: n}
}

func TestSummarizeDeviceTimes(t *testing.T) {
	rep := backend.ProfileReport{Status: result.StatusOK, Device: result.Device{Kind: "cuda", Name: "H100"},
		Profiler: "torch.profiler (CUPTI)", TimeKind: backend.TimeDevice, WallMs: 10, Calls: 2,
		Kernels: []backend.KernelTime{k("elementwise_kernel", 1, 4), k("sm90_xmma_gemm", 6, 2), k("aten::view", 0, 9), k("flash_fwd", 2, 2)}}
	s := Summarize("pytorch", rep)
	if len(s.Kernels) != 3 || s.Kernels[0].Name != "sm90_xmma_gemm" || s.Kernels[0].Share != 60 {
		t.Fatalf("kernels %+v", s.Kernels)
	}
	if s.LaunchMs != 1 || s.TotalMs != 10 || s.ByCat[GEMM] != 6 || s.ByCat[Launch] != 1 {
		t.Errorf("summary %+v", s)
	}
	var out bytes.Buffer
	s.Write(&out, 2)
	text := out.String()
	for _, want := range []string{"not a timing", "top 2 of 3 kernels", "launch overhead", "sm90_xmma_gemm", "60.0%", "share by category"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "elementwise_kernel") {
		t.Errorf("--top 2 printed the third kernel:\n%s", text)
	}
}

func TestSummarizeHostTimesHasNoLaunchRow(t *testing.T) {
	s := Summarize("jax", backend.ProfileReport{Profiler: "jax.profiler", TimeKind: backend.TimeHost, WallMs: 50,
		Kernels: []backend.KernelTime{k("dot.1", 3, 1), k("fusion.2", 1, 1)}})
	if s.TotalMs != 4 || s.Kernels[0].Share != 75 {
		t.Errorf("summary %+v", s)
	}
	if _, ok := s.ByCat[Launch]; ok {
		t.Error("host times got a launch-overhead row")
	}
	var out bytes.Buffer
	s.Write(&out, 0)
	if strings.Contains(out.String(), "launch overhead") || !strings.Contains(out.String(), "self host time") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestTraceRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.json")
	t0 := time.Now()
	if err := WriteTrace(path, []Event{Span("gemm", t0, t0.Add(time.Millisecond), 2*time.Millisecond, 1)}); err != nil {
		t.Fatal(err)
	}
	if n, err := CheckTrace(path); err != nil || n != 1 {
		t.Errorf("CheckTrace: %d, %v", n, err)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), `"ts":1000`) || !strings.Contains(string(raw), `"dur":2000`) {
		t.Errorf("trace %s", raw)
	}
	empty := filepath.Join(t.TempDir(), "e.json")
	_ = WriteTrace(empty, nil)
	if _, err := CheckTrace(empty); err == nil {
		t.Error("an empty trace passed the check")
	}
}
