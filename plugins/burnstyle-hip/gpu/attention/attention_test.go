package attention_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/attention"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/emutest"
)

// refAttention is the definition in float64 (bottom-right causal, GQA by
// h / (H/KH), zeros for a row that sees no key), written apart from both
// the kernel and package cpu.
func refAttention(s attention.Spec, q, k, v []float32) []float64 {
	S, KV, D, g := s.SeqLen, s.KVLen, s.HeadDim, s.Heads/s.KVHeads
	out := make([]float64, len(q))
	p := make([]float64, KV)
	for bh := 0; bh < s.Batch*s.Heads; bh++ {
		kb := (bh/s.Heads*s.KVHeads + bh%s.Heads/g) * KV * D
		for i := 0; i < S; i++ {
			qi := q[(bh*S+i)*D:][:D]
			m, n := math.Inf(-1), KV
			if s.Causal {
				n = max(0, min(KV, i+KV-S+1))
			}
			for j := 0; j < n; j++ {
				var acc float64
				for t, x := range qi {
					acc += float64(x) * float64(k[kb+j*D+t])
				}
				p[j] = acc / math.Sqrt(float64(D))
				m = math.Max(m, p[j])
			}
			var l float64
			for j := 0; j < n; j++ {
				p[j] = math.Exp(p[j] - m)
				l += p[j]
			}
			for t := 0; t < D && n > 0; t++ {
				var acc float64
				for j := 0; j < n; j++ {
					acc += p[j] * float64(v[kb+j*D+t])
				}
				out[(bh*S+i)*D+t] = acc / l
			}
		}
	}
	return out
}

// attnTol: float32 is accumulation order only; the 16-bit types are
// dominated by rounding out to the type (2^-9, 2^-12 relative).
var attnTol = map[string]float64{"float32": 2e-6, "bfloat16": 5e-3, "float16": 7e-4}

func checkAttention(t *testing.T, d *gpu.Device, s attention.Spec) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(s.HeadDim), uint64(s.SeqLen)))
	fill := func(n int, span float32, round func(float32) float32) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = round(span * (2*r.Float32() - 1))
		}
		return x
	}
	round := map[string]func(float32) float32{"float32": func(x float32) float32 { return x },
		"bfloat16": cpu.RoundBF16, "float16": cpu.RoundF16}[s.Dtype]
	q, k, v := fill(s.QLen(), 2, round), fill(s.KLen(), 2, round), fill(s.KLen(), 1, round)
	got, err := attention.Export(context.Background(), d, s, q, k, v)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	want := refAttention(s, q, k, v)
	var num, den float64
	nan := 0
	for i, w := range want {
		if math.IsNaN(float64(got[i])) {
			nan++
			continue
		}
		num += (float64(got[i]) - w) * (float64(got[i]) - w)
		den += w * w
	}
	e := math.Sqrt(num / den)
	t.Logf("%s: rel L2 %.3g", s, e)
	if nan > 0 || !(e <= attnTol[s.Dtype]) {
		t.Errorf("%s: rel L2 %.3g (tol %g), %d NaN/unwritten", s, e, attnTol[s.Dtype], nan)
	}
}

func attnSpec(b, h, kh, sl, kv, dim int, causal bool, dtype string) attention.Spec {
	return attention.Spec{AttentionShape: cpu.AttentionShape{Batch: b, Heads: h, KVHeads: kh, SeqLen: sl,
		KVLen: kv, HeadDim: dim, Causal: causal}, Dtype: dtype}
}

// TestEmuAttention: odd lengths (37 queries, 53 keys: no tile is whole),
// causal and not, GQA 4/2, every dtype, and one head dim per tile table
// entry of the CUDA-core kernel (16, 32: 64x64; 20: padded columns; 96:
// 64x32; 200: 32x16), bfloat16 and float16 on both kernels.
func TestEmuAttention(t *testing.T) {
	d := emutest.Open(t)
	for _, dt := range []string{"float32", "bfloat16"} {
		for _, causal := range []bool{false, true} {
			for _, dim := range []int{16, 32} {
				s := attnSpec(2, 4, 2, 37, 53, dim, causal, dt)
				s.CUDACores = true
				checkAttention(t, d, s)
			}
		}
	}
	cc := attnSpec(1, 2, 1, 37, 37, 24, true, "float16")
	cc.CUDACores = true
	checkAttention(t, d, cc)
	checkAttention(t, d, attnSpec(1, 2, 2, 70, 70, 20, true, "float32")) // two query tiles, D % 8 != 0
	checkAttention(t, d, attnSpec(1, 2, 1, 53, 37, 16, true, "float32")) // 16 rows see no key
	cc = attnSpec(1, 1, 1, 37, 101, 96, true, "bfloat16")                // 64x32 tiles, a skipped kv tile
	cc.CUDACores = true
	checkAttention(t, d, cc)
	checkAttention(t, d, attnSpec(1, 2, 1, 37, 53, 200, false, "float32")) // 32x16 tiles
	checkAttention(t, d, attnSpec(1, 1, 1, 5, 7, 1, true, "float32"))      // head_dim 1
}

// TestEmuAttentionMMA: the tensor-core kernel (bfloat16, float16) through
// the emulator's mma.sync stand-in: odd lengths, GQA, causal with a
// skipped kv tile and rows with no key, head dims padded to 16 (24, 20:
// also element-wise tile loads) and the 64x32 tiles past 128.
func TestEmuAttentionMMA(t *testing.T) {
	d := emutest.Open(t)
	for _, dt := range []string{"bfloat16", "float16"} {
		for _, causal := range []bool{false, true} {
			checkAttention(t, d, attnSpec(2, 4, 2, 37, 53, 32, causal, dt))
		}
		checkAttention(t, d, attnSpec(1, 2, 1, 70, 70, 24, true, dt))
	}
	checkAttention(t, d, attnSpec(1, 2, 1, 53, 37, 16, true, "bfloat16"))   // 16 rows see no key
	checkAttention(t, d, attnSpec(1, 1, 1, 37, 150, 20, true, "float16"))   // D % 8 != 0, skipped kv tiles
	checkAttention(t, d, attnSpec(1, 1, 1, 37, 53, 136, false, "bfloat16")) // 64x32 tiles
	checkAttention(t, d, attnSpec(1, 1, 1, 5, 7, 1, true, "float16"))       // head_dim 1
	for _, dim := range []int{64, 128, 256} {                               // the suites' head dims
		checkAttention(t, d, attnSpec(1, 2, 1, 37, 53, dim, true, "bfloat16"))
	}
	// Both query tiles: 64 rows (one m-tile a warp) and 128 (two), with
	// 150 queries so the second tile is partial and, causal, its rows see
	// different numbers of keys in each m-tile.
	for _, tile := range [][2]int{{64, 64}, {128, 64}, {128, 32}} {
		for _, causal := range []bool{false, true} {
			s := attnSpec(1, 2, 1, 150, 150, 64, causal, "bfloat16")
			s.QueryRows, s.KVRows = tile[0], tile[1]
			checkAttention(t, d, s)
			s.PlainLoads = true
			checkAttention(t, d, s)
		}
	}
}

func TestEmuAttentionTiming(t *testing.T) {
	d := emutest.Open(t)
	s := attnSpec(1, 2, 1, 37, 53, 16, true, "bfloat16")
	for _, cold := range []bool{false, true} {
		tm, err := attention.Time(context.Background(), d, s, gpu.Calls{Warmup: 1, Repeats: 3, ColdCache: cold}, 7)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(2 * (2*37*16 + 53*16) * 2)
		if len(tm.SamplesMs) != 3 || tm.CompileMs <= 0 || tm.PeakMemoryBytes != want || tm.Device.Kind != "cuda" ||
			!strings.Contains(tm.Timing, "xa_attention_mma (tensor cores") || !strings.HasPrefix(tm.Kernel, "xa_attention_mma (tensor cores") || strings.Contains(tm.Timing, "memset") != cold {
			t.Errorf("cold=%v: %+v (want peak %d)", cold, tm, want)
		}
		for _, ms := range tm.SamplesMs {
			if !(ms > 0) {
				t.Errorf("cold=%v: sample %g ms", cold, ms)
			}
		}
	}
}

func TestEmuAttentionRefuses(t *testing.T) {
	d := emutest.Open(t)
	for _, tc := range []struct {
		s    attention.Spec
		want string
	}{
		{attnSpec(1, 2, 1, 8, 8, 257, false, "float32"), "head_dim 257 > 256"},
		{attnSpec(1, 2, 1, 8, 8, 64, false, "float64"), `dtype "float64"`},
		{attnSpec(1, 3, 2, 8, 8, 64, false, "float32"), "kv_heads 2 does not divide heads 3"},
		{attnSpec(65536, 2, 1, 8, 8, 64, false, "float32"), "batch and heads must be at most 65535"},
		{func() attention.Spec {
			s := attnSpec(1, 2, 1, 8, 8, 64, false, "bfloat16")
			s.QueryRows = 96
			return s
		}(),
			"query tile of 96 rows (allowed: 64, 128"},
		{func() attention.Spec { s := attnSpec(1, 2, 1, 8, 8, 64, false, "bfloat16"); s.KVRows = 48; return s }(),
			"kv tile of 48 rows (allowed: 32, 64"},
	} {
		if _, err := attention.Export(context.Background(), d, tc.s, nil, nil, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.s, err, tc.want)
		}
	}
	s := attnSpec(1, 1, 1, 4, 4, 8, false, "float32")
	if _, err := attention.Export(context.Background(), d, s, make([]float32, 3), nil, nil); err == nil || !strings.Contains(err.Error(), "have 3, 0, 0") {
		t.Errorf("short q: %v", err)
	}
}

// TestGPUAttention runs with XBENCH_REQUIRE_GPU=1 on a real GPU (see
// TestGPU): both kernels against the float64 reference at the suites' head
// dims and at odd lengths, then the times of one Llama-3-8B prefill cell
// (b4 h32/8 s4096 d128 causal), logged as TFLOP/s by the workload's count.
func TestGPUAttention(t *testing.T) {
	d := cudaDevice(t, "a GPU")
	for _, dt := range []string{"float32", "bfloat16", "float16"} {
		for _, cores := range []bool{false, true} {
			if cores && dt == "float32" {
				continue // float32 always runs on CUDA cores
			}
			checkAttention(t, d, attnSpec(1, 1, 1, 5, 7, 1, true, "float16")) // head_dim 1
			for _, dt := range []string{"bfloat16", "float16"} {              // the fallback: scalar fragment loads
				s := attnSpec(2, 4, 2, 37, 53, 32, true, dt)
				s.PlainLoads = true
				checkAttention(t, d, s)
			}
			for _, dim := range []int{64, 128, 256} {
				for _, causal := range []bool{false, true} {
					s := attnSpec(1, 4, 2, 300, 300, dim, causal, dt)
					s.CUDACores = cores
					checkAttention(t, d, s)
				}
			}
			s := attnSpec(2, 4, 2, 37, 53, 20, true, dt)
			s.CUDACores = cores
			checkAttention(t, d, s)
		}
	}
	sync := attnSpec(1, 4, 2, 300, 300, 128, true, "bfloat16")
	sync.PlainLoads = true
	checkAttention(t, d, sync)
	tiles := [][2]int{{64, 64}, {128, 32}, {128, 64}} // query x kv rows
	for _, tile := range tiles {                      // every tile at the suites' head dims, odd lengths
		for _, dim := range []int{64, 128} {
			s := attnSpec(1, 4, 2, 300, 300, dim, true, "bfloat16")
			s.QueryRows, s.KVRows = tile[0], tile[1]
			checkAttention(t, d, s)
		}
	}
	type timed struct {
		dt          string
		cores, sync bool
		tile        [2]int
	}
	cases := []timed{{"bfloat16", false, false, [2]int{}}, {"float16", false, false, [2]int{}},
		{"bfloat16", false, true, [2]int{}}, {"bfloat16", true, false, [2]int{}}, {"float32", false, false, [2]int{}}}
	for _, tile := range tiles {
		cases = append(cases, timed{"bfloat16", false, false, tile})
	}
	for _, tc := range cases {
		s := attnSpec(4, 32, 8, 4096, 4096, 128, true, tc.dt)
		s.CUDACores, s.PlainLoads, s.QueryRows, s.KVRows = tc.cores, tc.sync, tc.tile[0], tc.tile[1]
		tm, err := attention.Time(context.Background(), d, s, gpu.Calls{Warmup: 3, Repeats: 10}, 1)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		ms := slices.Sorted(slices.Values(tm.SamplesMs))[len(tm.SamplesMs)/2]
		flops := 4.0 * 4 * 32 * 4096 * 4096 * 128 / 2
		t.Logf("%s: median %.3f ms, %.1f TFLOP/s, compile %.0f ms; %s", s, ms, flops/ms/1e9, tm.CompileMs, tm.Timing)
	}
}

// TestAttentionNVRTC compiles every dtype at the suites' head dims (and a
// padded one) with the real NVRTC for sm_90 when XBENCH_LIBNVRTC names it
// (no GPU needed; test.sh names the venv's) and fails on a compile error or
// a register spill. One spill is known and bounded: the 16-bit 128x64 tile
// at D = 128 (see mmaTilesFor: faster on the H100 than 128x32 without one).
func TestAttentionNVRTC(t *testing.T) {
	if os.Getenv("XBENCH_LIBNVRTC") == "" {
		t.Skip("set XBENCH_LIBNVRTC to a libnvrtc.so to compile the attention kernels for sm_90")
	}
	// real NVRTC compiles only: safe beside each other, after the serial emulator tests
	t.Parallel()
	for _, dt := range []string{"float32", "bfloat16", "float16"} {
		for _, dim := range []int{20, 32, 64, 128, 256} {
			s := attnSpec(1, 1, 1, 1, 1, dim, false, dt)
			s.PlainLoads = dim == 64 // the fallback compiles too
			if dt == "float16" && dim == 128 {
				s.GradKeys = 128 // the backward's wider key tile (attention_bwd_mma.cu)
			}
			log, err := attention.CompileReport(s, "sm_90")
			if err != nil {
				t.Fatalf("%s: %v\n%s", s, err, log)
			}
			t.Logf("%s:\n%s", s, log)
			allowed := 0
			if dt != "float32" && dim > 64 && dim <= 128 {
				allowed = 128
			}
			if stores, loads := ptxasSpills(t, s.String(), log); stores > allowed || loads > allowed {
				t.Errorf("%s spills %d/%d bytes (allowed %d):\n%s", s, stores, loads, allowed, log)
			}
		}
	}
}

// ptxasSpills is the most any kernel of a ptxas log spills (its "N bytes
// stack frame, N bytes spill stores, N bytes spill loads" lines).
func ptxasSpills(t *testing.T, name, log string) (stores, loads int) {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, "bytes stack frame") {
			continue
		}
		var frame, st, ld int
		if _, err := fmt.Sscanf(strings.TrimLeft(line[strings.Index(line, ".")+1:], " "),
			"%d bytes stack frame, %d bytes spill stores, %d bytes spill loads", &frame, &st, &ld); err != nil {
			t.Fatalf("%s: unreadable ptxas line %q: %v", name, line, err)
		}
		stores, loads = max(stores, st), max(loads, ld)
	}
	return stores, loads
}
