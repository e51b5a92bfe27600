package ttt_test

import (
	"os"
	"testing"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/emutest"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

// The emulator tests open the CPU emulator through internal/emutest, which
// builds it once and shares compiled kernel programs across test binaries.
func useEmulator(t *testing.T)                      { emutest.Use(t) }
func openEmu(t *testing.T) *gpu.Device              { return emutest.Open(t) }
func openEmuHIP(t *testing.T, wave int) *gpu.Device { return emutest.OpenHIP(t, wave) }

func verify(t *testing.T, d *gpu.Device, size, typ, dtype string, inner bool, L int, opt gputtt.Options) {
	t.Helper()
	cfg := check.Config(size, typ, dtype, inner, 2, L)
	if size == "125m" {
		cfg.Batch = 1
		switch { // f = 64's kernels and code paths, at a fraction of the work
		case opt.Shape != nil:
		case inner:
			opt.Shape = check.SmallInner(size) // two heads, not twelve
		default:
			opt.Shape = check.Small(size) // two layers, not twelve
		}
	}
	o, err := check.Verify(d, cfg, 7, opt)
	if err != nil {
		t.Fatalf("%s %s %s inner=%v: %v", size, typ, dtype, inner, err)
	}
	t.Logf("%s %s %s inner=%v L=%d: rel L2 %.3g, max abs %.3g (%s)", size, typ, dtype, inner, L, o.RelL2, o.MaxAbs, o.Describe)
	if !o.Pass() {
		t.Errorf("%s %s %s inner=%v: rel L2 %.3g (tol %.g), %d NaN/unwritten", size, typ, dtype, inner, o.RelL2, o.Tol, o.NaN)
	}
}

func TestEmuTiny(t *testing.T) {
	d := openEmu(t)
	for _, typ := range []string{"linear", "mlp"} {
		for _, dt := range []string{"float32", "bfloat16"} {
			verify(t, d, "tiny", typ, dt, false, 64, gputtt.Options{})
			verify(t, d, "tiny", typ, dt, true, 64, gputtt.Options{})
		}
	}
}

func TestEmuPortableGEMM(t *testing.T) {
	d := openEmu(t)
	for _, dt := range []string{"float32", "bfloat16"} {
		verify(t, d, "tiny", "linear", dt, false, 48, gputtt.Options{OwnGEMM: true})
	}
}

// The first linear layout stays selectable (InnerVariant 1) as the baseline.
func TestEmuLinearVariant1(t *testing.T) {
	d := openEmu(t)
	verify(t, d, "tiny", "linear", "float32", true, 64, gputtt.Options{InnerVariant: 1})
	verify(t, d, "125m", "linear", "bfloat16", true, 32, gputtt.Options{InnerVariant: 1})
}

// f = 64 takes other branches than tiny's f = 16 (two elements per lane,
// several row groups per thread), so 125m runs too, on short sequences.
// The default set keeps CI near a minute; XBENCH_EMU_FULL=1 adds the rest.
func TestEmu125m(t *testing.T) {
	d := openEmu(t)
	verify(t, d, "125m", "linear", "float32", true, 48, gputtt.Options{})
	verify(t, d, "125m", "linear", "float32", true, 32, gputtt.Options{InnerThreads: 512})
	verify(t, d, "125m", "mlp", "bfloat16", true, 32, gputtt.Options{})
	verify(t, d, "125m", "linear", "float32", false, 16, gputtt.Options{})
	if os.Getenv("XBENCH_EMU_FULL") != "1" {
		t.Log("more 125m cases with XBENCH_EMU_FULL=1")
		return
	}
	verify(t, d, "125m", "mlp", "float32", true, 48, gputtt.Options{})
	verify(t, d, "125m", "linear", "bfloat16", true, 32, gputtt.Options{})
	verify(t, d, "125m", "mlp", "bfloat16", false, 16, gputtt.Options{})
	verify(t, d, "125m", "mlp", "float32", true, 32, gputtt.Options{InnerThreads: 512})
}

// The engine adapter the Native backend plugs in: checks, prepare, device-
// timed steps and the output tensor, end to end on the emulator.
func TestEmuEngine(t *testing.T) {
	useEmulator(t)
	e, err := gputtt.NewEngine("cuda")
	if err != nil {
		t.Fatal(err)
	}
	cfg := check.Config("tiny", "linear", "float32", false, 1, 32)
	s, w, in, err := check.Inputs(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ field, value string }{{"dtype", "float64"}, {"backbone", "rwkv"}} {
		c := cfg
		if bad.field == "dtype" {
			c.Dtype = bad.value
		} else {
			c.Backbone = bad.value
		}
		if st, msg := e.Check(c, s); st != "unsupported" || msg == "" {
			t.Errorf("%s %s: status %q %q, want unsupported with a reason", bad.field, bad.value, st, msg)
		}
	}
	if st, msg := e.Check(cfg, s); st != "ok" {
		t.Fatalf("check: %s %s", st, msg)
	}
	j, err := e.Prepare(cfg, s, w, in)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for i := 0; i < 2; i++ {
		if ms, err := j.StepMs(); err != nil || ms <= 0 {
			t.Fatalf("step %d: %v ms, %v", i, ms, err)
		}
	}
	name, out, err := j.Output()
	if err != nil || name != "logits" || len(out.Shape) != 3 || out.Shape[2] != s.Vocab {
		t.Fatalf("output %q %v: %v", name, out.Shape, err)
	}
	ref, err := check.Reference(cfg, s, w, in)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := out.Float64s()
	var num, den float64
	for i := range ref {
		num += (got[i] - ref[i]) * (got[i] - ref[i])
		den += ref[i] * ref[i]
	}
	if num/den > 1e-8 || j.MemoryBytes() <= 0 || e.Device().Kind != "cuda" {
		t.Errorf("rel L2^2 %.3g, memory %d, device %+v", num/den, j.MemoryBytes(), e.Device())
	}
}

func TestEmuOnePass(t *testing.T) {
	d := openEmu(t)
	verify(t, d, "tiny", "linear", "float32", true, 64, gputtt.Options{OnePassStats: true})
	verify(t, d, "125m", "linear", "float32", true, 32, gputtt.Options{OnePassStats: true})
	verify(t, d, "125m", "linear", "bfloat16", true, 32, gputtt.Options{Unroll: 8})
}

// The cluster kernel (variant 3, the default where clusters launch) at other
// cluster sizes, including 1 (no cluster: the portable fallback), and the
// row-group kernel it replaced as the default.
func TestEmuLinearCluster(t *testing.T) {
	d := openEmu(t)
	verify(t, d, "tiny", "linear", "float32", true, 64, gputtt.Options{InnerVariant: 3, ClusterSize: 1})
	verify(t, d, "tiny", "linear", "float32", true, 48, gputtt.Options{InnerVariant: 3, ClusterSize: 2})
	verify(t, d, "tiny", "linear", "bfloat16", false, 32, gputtt.Options{InnerVariant: 3, ClusterSize: 2})
	verify(t, d, "125m", "linear", "float32", true, 32, gputtt.Options{InnerVariant: 3, ClusterSize: 4})
	verify(t, d, "125m", "linear", "bfloat16", true, 32, gputtt.Options{InnerVariant: 3, ClusterSize: 8})
	verify(t, d, "tiny", "linear", "float32", true, 64, gputtt.Options{InnerVariant: 2})
	verify(t, d, "tiny", "linear", "bfloat16", false, 64, gputtt.Options{InnerVariant: 2})
}

// The chunked forward (wavefront.go) at every chunk count a tiny sequence of
// four mini-batches allows, uneven splits (3) included, two sequences per
// batch; 1 is the flat forward. 125m takes the 4-CTA cluster kernel. The emulator fails a stream wait on an event
// not yet recorded, so a dependency enqueued in the wrong order fails here.
func TestEmuChunkedForward(t *testing.T) {
	d := openEmu(t)
	for _, n := range []int{1, 2, 3, 4} {
		verify(t, d, "tiny", "linear", "float32", false, 64, gputtt.Options{Chunks: n})
	}
	verify(t, d, "tiny", "linear", "bfloat16", false, 64, gputtt.Options{Chunks: 3})
	verify(t, d, "tiny", "linear", "float32", false, 64, gputtt.Options{Chunks: 4, FlatPriority: true})
	verify(t, d, "tiny", "linear", "float32", false, 64, gputtt.Options{Chunks: 2, InnerVariant: 3, ClusterSize: 1})
	verify(t, d, "125m", "linear", "float32", false, 32, gputtt.Options{Chunks: 2})
	// the mlp kernel carries W1, b1, W2, b2 between chunks
	verify(t, d, "tiny", "mlp", "float32", false, 64, gputtt.Options{Chunks: 3})
	verify(t, d, "tiny", "mlp", "bfloat16", false, 64, gputtt.Options{Chunks: 4})
}
