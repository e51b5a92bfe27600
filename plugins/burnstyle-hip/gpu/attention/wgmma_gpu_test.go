package attention_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/attention"
)

// The wgmma kernel's checks on an H100 (XBENCH_REQUIRE_GPU=1; see
// scripts/h100-wgmma.sh). Written to be read from the log alone: every
// mismatch report names the first bad element, how many are bad, which
// rows (a consumer warpgroup is 64 rows, a warp 16) and, for the layout
// checks, where in the expected matrix the value it got belongs.

func hopper(t *testing.T) *gpu.Device {
	t.Helper()
	d := cudaDevice(t, "an H100")
	if sm := d.RT.SM(); sm != 90 {
		t.Fatalf("the wgmma kernel needs sm_90, this device is sm_%d (%s)", sm, d.Info().Name)
	}
	return d
}

// ints are n small integers in [-r, r]: their products and sums of up to
// 128 of them are exact in float32 and float16, so a layout error shows as
// a value that exists elsewhere in the expected matrix.
func ints(n, r int, seed uint64) []float32 {
	g := rand.New(rand.NewPCG(seed, 7))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(g.IntN(2*r+1) - r)
	}
	return x
}

// compare reports got against want (rows x cols): the first mismatches,
// where each got value occurs in want, the bad count and the bad rows' span.
// fail false only logs (a diagnosis that must not fail the test).
func compare(t *testing.T, what string, got []float32, want []float64, rows, cols int, tol float64, fail bool) bool {
	t.Helper()
	bad, firstRow, lastRow := 0, -1, -1
	for i, w := range want {
		g := float64(got[i])
		if math.IsNaN(g) || math.Abs(g-w) > tol*(1+math.Abs(w)) {
			if bad < 6 {
				r, c := i/cols, i%cols
				where := []string{}
				for j, w2 := range want {
					if w2 == g && len(where) < 4 {
						where = append(where, fmt.Sprintf("(%d,%d)", j/cols, j%cols))
					}
				}
				t.Logf("%s: MISMATCH at row %d col %d: got %g want %g; got value is want at %v", what, r, c, g, w, where)
			}
			if firstRow < 0 {
				firstRow = i / cols
			}
			lastRow = i / cols
			bad++
		}
	}
	if bad > 0 {
		report := t.Logf
		if fail {
			report = t.Errorf
		}
		report("%s: %d of %d elements wrong, rows %d..%d of %d", what, bad, len(want), firstRow, lastRow, rows)
		return false
	}
	t.Logf("%s: all %d elements match", what, len(want))
	return true
}

// TestGPUWGMMADebug checks each operand path of the kernel alone, on the
// first k/v tile of 128 queries, in both schedules (their key tiles
// differ: 96 keys for the overlapped one at head dim 128): qk (debug mode
// 1: raw q.k^T of the tile's keys, zeros past them; q and k through the
// tensor maps and the K-major descriptors, the accumulator layout) and pv
// (debug mode 2: P = I over the tile, so out row r = v row r % tile; v's
// MN-major descriptor and P's register fragment; when it fails, the other
// order of v's byte offsets is tried and the log says whether that one is
// right).
func TestGPUWGMMADebug(t *testing.T) {
	d := hopper(t)
	for _, serial := range []bool{false, true} {
		sched := map[bool]string{false: "overlap", true: "serial"}[serial]
		for _, dt := range []string{"float16", "bfloat16"} {
			for _, dim := range []int{128, 64} {
				s := attnSpec(1, 1, 1, 128, 128, dim, false, dt)
				s.WGMMAOverlap = !serial
				bn := attention.WGMMAKeyRows(s)
				q, k, v := ints(s.QLen(), 2, 1), ints(s.KLen(), 2, 2), ints(s.KLen(), 8, 3)
				t.Run(fmt.Sprintf("qk/%s/%s/d%d/bn%d", sched, dt, dim, bn), func(t *testing.T) {
					s := s
					s.WGMMADebug = 1
					got, err := attention.Export(context.Background(), d, s, q, k, v)
					if err != nil {
						t.Fatalf("%s: %v", s, err)
					}
					want := make([]float64, 128*dim) // scores of keys 0..min(dim, bn)-1 (out has dim columns)
					for r := 0; r < 128; r++ {
						for c := 0; c < min(dim, bn); c++ {
							for x := 0; x < dim; x++ {
								want[r*dim+c] += float64(q[r*dim+x]) * float64(k[c*dim+x])
							}
						}
					}
					tol := 0.0
					if dt == "bfloat16" {
						tol = 1.0 / 128 // sums past 256 round in bfloat16's 8 bits
					}
					compare(t, fmt.Sprintf("q.k^T %s %s d%d bn%d", sched, dt, dim, bn), got, want, 128, dim, tol, true)
				})
				t.Run(fmt.Sprintf("pv/%s/%s/d%d/bn%d", sched, dt, dim, bn), func(t *testing.T) {
					want := make([]float64, len(v))
					for i := range want {
						want[i] = float64(v[(i/dim%bn)*dim+i%dim])
					}
					pv := func(swap bool, fail bool) bool {
						s := s
						s.WGMMADebug, s.WGMMAVSwap = 2, swap
						got, err := attention.Export(context.Background(), d, s, q, k, v)
						if err != nil {
							t.Fatalf("%s vswap=%v: %v", s, swap, err)
						}
						return compare(t, fmt.Sprintf("P.v with P = I %s %s d%d bn%d vswap=%v", sched, dt, dim, bn, swap), got, want, 128, dim, 0, fail)
					}
					// The kernel's order (vswap false) must hold; only when it does
					// not, the swapped order is tried, to say whether it is the fix.
					if !pv(false, true) {
						t.Logf("RESULT: v descriptor with swapped byte offsets (XW_VSWAP 1) right: %v (%s %s d%d bn%d)", pv(true, false), sched, dt, dim, bn)
					}
				})
			}
		}
	}
}

// TestGPUWGMMA checks the whole kernel against the float64 reference
// (rel L2 within the dtype's tolerance, every element written) at shapes
// that cross every edge: lengths no multiple of 128, more keys than
// queries and fewer, causal and not, GQA and not, both dtypes and head
// dims, in both schedules; then times it at the shape beside the
// mma.sync kernel and its variants.
func TestGPUWGMMA(t *testing.T) {
	d := hopper(t)
	for _, serial := range []bool{false, true} { // both schedules (and so both key tiles at head dim 128)
		for _, dt := range []string{"bfloat16", "float16"} {
			for _, dim := range []int{128, 64} {
				for _, causal := range []bool{false, true} {
					// heads, kv heads, queries, keys: 37 and 53 are shorter than a
					// tile (the tensor map's box is larger than the tensor)
					for i, sh := range [][4]int{{4, 2, 300, 300}, {2, 1, 37, 53}, {2, 2, 129, 513}, {4, 1, 1000, 200}} {
						if dim == 64 && i >= 2 {
							continue // the long shapes at head dim 128 only: the step has a time limit
						}
						s := attnSpec(1, sh[0], sh[1], sh[2], sh[3], dim, causal, dt)
						s.WGMMAOverlap = !serial
						name := map[bool]string{false: "overlap ", true: "serial "}[serial] + s.String()
						t.Run(name, func(t *testing.T) { checkWGMMA(t, d, s) })
					}
				}
			}
		}
	}
	// Times at the shape: the default (serial schedule, 128-key
	// tiles), the overlapped schedule (96-key tiles at head dim 128), the
	// mma.sync kernel, then other variants (each checked
	// first on a few shapes: a hang there stops only this last part, and no
	// variant is timed without its check).
	type variant struct {
		name              string
		mma, ping, serial bool
		stages, keyRows   int
	}
	for _, vr := range []variant{{"wgmma serial (default)", false, false, true, 0, 0}, {"wgmma overlap", false, false, false, 0, 0},
		{"mma.sync", true, false, false, 0, 0}, {"wgmma overlap pingpong", false, true, false, 0, 0},
		{"wgmma overlap 64-key tiles", false, false, false, 0, 64}, {"wgmma overlap 3 stages", false, false, false, 3, 0},
		{"wgmma serial 96-key tiles", false, false, true, 0, 96},
		{"wgmma serial pingpong", false, true, true, 0, 0}} {
		s := attnSpec(4, 32, 8, 4096, 4096, 128, true, "bfloat16")
		s.MMASync, s.WGMMAPingPong, s.WGMMAOverlap, s.WGMMAStages, s.WGMMAKeyRows = vr.mma, vr.ping, !vr.serial, vr.stages, vr.keyRows
		if vr.ping || vr.stages > 0 || vr.keyRows > 0 || (!vr.serial && !vr.mma) {
			for _, c := range []attention.Spec{attnSpec(1, 4, 2, 300, 300, 128, true, "bfloat16"), attnSpec(1, 4, 4, 1000, 200, 64, false, "float16"),
				attnSpec(1, 2, 2, 129, 513, 128, false, "float16")} {
				c.WGMMAPingPong, c.WGMMAOverlap, c.WGMMAStages, c.WGMMAKeyRows = vr.ping, !vr.serial, vr.stages, vr.keyRows
				t.Run(vr.name+" "+c.String(), func(t *testing.T) { checkWGMMA(t, d, c) })
			}
		}
		tm, err := attention.Time(context.Background(), d, s, gpu.Calls{Warmup: 3, Repeats: 10}, 1)
		if err != nil {
			t.Fatalf("%s %s: %v", vr.name, s, err)
		}
		ms := slices.Sorted(slices.Values(tm.SamplesMs))[len(tm.SamplesMs)/2]
		flops := 4.0 * 4 * 32 * 4096 * 4096 * 128 / 2
		t.Logf("TIMING %s %s: median %.3f ms, %.1f TFLOP/s; %s", vr.name, s, ms, flops/ms/1e9, tm.Kernel)
	}
}

func checkWGMMA(t *testing.T, d *gpu.Device, s attention.Spec) {
	r := rand.New(rand.NewPCG(uint64(s.HeadDim), uint64(s.SeqLen)))
	round := map[string]func(float32) float32{"bfloat16": cpu.RoundBF16, "float16": cpu.RoundF16}[s.Dtype]
	fill := func(n int, span float32) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = round(span * (2*r.Float32() - 1))
		}
		return x
	}
	q, k, v := fill(s.QLen(), 2), fill(s.KLen(), 2), fill(s.KLen(), 1)
	got, err := attention.Export(context.Background(), d, s, q, k, v)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	want := refAttention(s, q, k, v)
	var num, den float64
	for i, w := range want {
		num += (float64(got[i]) - w) * (float64(got[i]) - w)
		den += w * w
	}
	e := math.Sqrt(num / den)
	t.Logf("%s: rel L2 %.3g", s, e)
	if !(e <= attnTol[s.Dtype]) { // NaN (unwritten) fails too
		compare(t, s.String(), got, want, s.Batch*s.Heads*s.SeqLen, s.HeadDim, 0.05, true)
		t.Errorf("%s: rel L2 %.3g (tol %g)", s, e, attnTol[s.Dtype])
	}
}
