package scan_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/emutest"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/scan"
)

func scanInputs(s cpu.ScanShape) (cum, trans, dur []float64, lengths []int64) {
	rng := rand.New(rand.NewPCG(uint64(s.T), uint64(s.C)))
	cum = make([]float64, s.Batch*(s.T+1)*s.C)
	for b := 0; b < s.Batch; b++ {
		for t := 1; t <= s.T; t++ {
			for c := 0; c < s.C; c++ {
				cum[(b*(s.T+1)+t)*s.C+c] = cum[(b*(s.T+1)+t-1)*s.C+c] + rng.NormFloat64()
			}
		}
	}
	vec := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 0.5 * rng.NormFloat64()
		}
		return v
	}
	lengths = make([]int64, s.Batch)
	for b := range lengths {
		lengths[b] = int64(s.T - b*s.T/(2*s.Batch))
	}
	return cum, vec(s.C * s.C), vec(s.K * s.C), lengths
}

func checkScan(t *testing.T, d *gpu.Device, spec scan.Spec) {
	t.Helper()
	cum, trans, dur, lengths := scanInputs(spec.ScanShape)
	got, err := scan.Export(context.Background(), d, spec, scan.Inputs{Cum: cum, Trans: trans, Dur: dur, Lengths: lengths})
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	want, err := cpu.Scan(spec.ScanShape, cum, trans, dur, lengths, false)
	if err != nil {
		t.Fatal(err)
	}
	tol := map[string]float64{"float32": 1e-5, "float64": 1e-12}[spec.Dtype]
	for b := range want.Out {
		if e := math.Abs(got[b]-want.Out[b]) / math.Max(1, math.Abs(want.Out[b])); !(e <= tol) {
			t.Errorf("%s row %d: %v, the CPU scan %v (rel %.2g, tol %g)", spec, b, got[b], want.Out[b], e, tol)
		}
	}
}

// TestEmuScan: the scan kernel on the emulator against package cpu's scan:
// both semirings and dtypes, K = 1 and K > C, C = 1 and C past one warp
// (40: two warps, the second mostly idle), variable lengths.
func TestEmuScan(t *testing.T) {
	d := emutest.Open(t)
	for _, dt := range []string{"float32", "float64"} {
		for _, sr := range []string{"log", "max"} {
			for _, sh := range []cpu.ScanShape{{T: 20, K: 4, C: 3, Batch: 3}, {T: 9, K: 1, C: 2, Batch: 2}, {T: 30, K: 7, C: 1, Batch: 1}} {
				sh.Semiring = sr
				checkScan(t, d, scan.Spec{ScanShape: sh, Dtype: dt})
			}
		}
	}
	checkScan(t, d, scan.Spec{ScanShape: cpu.ScanShape{T: 12, K: 3, C: 40, Batch: 2, Semiring: "log"}, Dtype: "float32"})
	if err := scan.Supported(scan.Spec{ScanShape: cpu.ScanShape{T: 8, K: 2, C: 2, Batch: 1, Semiring: "entropy"}, Dtype: "float32"}); err == nil {
		t.Error("entropy accepted by the GPU kernel")
	}
}

// TestGPUScan times the kernel at the reference point on a real GPU
// (batch 4, T 1024, K 24, C 12, log, float32) after checking it there.
func TestGPUScan(t *testing.T) {
	if os.Getenv("XBENCH_REQUIRE_GPU") != "1" {
		t.Skip("needs a GPU: set XBENCH_REQUIRE_GPU=1")
	}
	d, err := gpu.Open("cuda")
	if err != nil {
		t.Fatalf("XBENCH_REQUIRE_GPU=1 but no CUDA GPU opened: %v", err)
	}
	defer d.Close()
	spec := scan.Spec{ScanShape: cpu.ScanShape{T: 1024, K: 24, C: 12, Batch: 4, Semiring: "log"}, Dtype: "float32"}
	checkScan(t, d, spec)
	cum, trans, dur, lengths := scanInputs(spec.ScanShape)
	tm, err := scan.Time(context.Background(), d, spec, scan.Inputs{Cum: cum, Trans: trans, Dur: dur, Lengths: lengths}, gpu.Calls{Warmup: 3, Repeats: 20})
	if err != nil {
		t.Fatal(err)
	}
	ms := slices.Clone(tm.SamplesMs)
	slices.Sort(ms)
	t.Logf("%s: median of %d samples %.3f ms (%s)", spec, len(ms), ms[len(ms)/2], tm.Timing)
}

// TestScanNVRTC compiles every variant of the scan kernel with the real
// NVRTC for sm_90 (XBENCH_LIBNVRTC names it), without register spills.
func TestScanNVRTC(t *testing.T) {
	if os.Getenv("XBENCH_LIBNVRTC") == "" {
		t.Skip("set XBENCH_LIBNVRTC to a libnvrtc.so to compile the scan kernel for sm_90")
	}
	// real NVRTC compiles only: safe beside each other, after the serial emulator tests
	t.Parallel()
	for _, dt := range []string{"float32", "float64"} {
		for _, sr := range []string{"log", "max"} {
			s := scan.Spec{ScanShape: cpu.ScanShape{T: 8, K: 4, C: 3, Batch: 1, Semiring: sr}, Dtype: dt}
			log, err := scan.CompileReport(s, "sm_90")
			if err != nil {
				t.Fatalf("%s: %v\n%s", s, err, log)
			}
			if strings.Contains(log, "bytes spill") && !strings.Contains(log, " 0 bytes spill stores, 0 bytes spill loads") {
				t.Errorf("%s spills registers:\n%s", s, log)
			}
			t.Logf("%s:\n%s", s, log)
		}
	}
}
