package ttt_test

import (
	"os"
	"strings"
	"testing"
	"time"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

// The mamba backbone's forward on the emulator against the CPU float64
// model: flat at tiny (both inner types, both dtypes) and 125m (f = 64, C =
// 768: several channels per thread in the row kernels), and chunked, where
// each chunk's convolutions read the previous chunk's last rows from the
// halo: 3 chunks of a 64-token sequence (mini-batches 1, 1, 2) put two
// boundaries inside each of its two sequences, in float32, whose tolerance
// a halo read wrongly would break. XBENCH_EMU_FULL=1 adds the slower cases.
func TestEmuMamba(t *testing.T) {
	d := openEmu(t)
	type tc struct {
		size, typ, dtype string
		L                int
		opt              gputtt.Options
	}
	cases := []tc{
		{"tiny", "linear", "float32", 64, gputtt.Options{Chunks: 3}},
		{"tiny", "linear", "bfloat16", 32, gputtt.Options{Chunks: 1}}, // flat
		{"tiny", "mlp", "float32", 32, gputtt.Options{Chunks: 2}},     // the mlp state and the conv halo both cross the chunk
		{"125m", "linear", "float32", 16, gputtt.Options{}},
	}
	if os.Getenv("XBENCH_EMU_FULL") == "1" {
		cases = append(cases, tc{"tiny", "linear", "float32", 64, gputtt.Options{}},
			tc{"tiny", "mlp", "bfloat16", 32, gputtt.Options{}},
			tc{"125m", "linear", "bfloat16", 32, gputtt.Options{Chunks: 2}})
	} else {
		t.Log("more mamba cases with XBENCH_EMU_FULL=1")
	}
	for _, c := range cases {
		cfg := check.Config(c.size, c.typ, c.dtype, false, 2, c.L)
		cfg.Backbone = "mamba"
		if c.size == "125m" {
			cfg.Batch = 1
			c.opt.Shape = check.Small(c.size) // f = 64's kernels, two layers, not twelve
		}
		t0 := time.Now()
		o, err := check.Verify(d, cfg, 7, c.opt)
		if err != nil {
			t.Fatalf("%s %s %s chunks=%d: %v", c.size, c.typ, c.dtype, c.opt.Chunks, err)
		}
		t.Logf("%s %s %s L=%d chunks=%d: rel L2 %.3g, max abs %.3g in %v (%s)", c.size, c.typ, c.dtype, c.L,
			c.opt.Chunks, o.RelL2, o.MaxAbs, time.Since(t0).Round(time.Millisecond), o.Describe)
		if !o.Pass() {
			t.Errorf("%s %s %s chunks=%d: rel L2 %.3g (tol %.g), %d NaN/unwritten", c.size, c.typ, c.dtype,
				c.opt.Chunks, o.RelL2, o.Tol, o.NaN)
		}
		if want := c.opt.Chunks > 1; strings.Contains(o.Describe, "chunks per sequence") != want {
			t.Errorf("%s chunks=%d ran %q", c.size, c.opt.Chunks, o.Describe)
		}
	}
}

// TestMambaNVRTC compiles the program with the mamba kernels in both dtypes
// and both inner types at 125m with the real NVRTC for sm_90 when
// XBENCH_LIBNVRTC names it (no GPU needed), and fails on a compile error or
// a register spill.
func TestMambaNVRTC(t *testing.T) {
	if os.Getenv("XBENCH_LIBNVRTC") == "" {
		t.Skip("set XBENCH_LIBNVRTC to a libnvrtc.so to compile the kernels for sm_90")
	}
	// real NVRTC compiles only: safe beside each other, after the serial emulator tests
	t.Parallel()
	for _, typ := range []string{"linear", "mlp"} {
		for _, dt := range []string{"float32", "bfloat16"} {
			cfg := check.Config("125m", typ, dt, false, 1, 2048)
			cfg.Backbone = "mamba"
			log, err := gputtt.CompileReport(cfg, gputtt.Options{}, "sm_90")
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", typ, dt, err, log)
			}
			// Only this file's kernels are held to no spills here: the
			// others have their own tests (xb_inner_mlp spills 56 bytes at
			// f = 64 on sm_90 with or without mamba).
			mine := map[string]bool{"xb_conv_res": false, "xb_prep_mamba": false, "xb_layernorm_gate": false}
			fn := ""
			for _, line := range strings.Split(log, "\n") {
				if _, name, ok := strings.Cut(line, "Function properties for "); ok {
					fn = strings.TrimSpace(name)
				}
				if _, ok := mine[fn]; ok && strings.Contains(line, "bytes spill") {
					mine[fn] = true
					if !strings.Contains(line, " 0 bytes spill stores, 0 bytes spill loads") {
						t.Errorf("%s %s: %s spills registers: %s", typ, dt, fn, line)
					}
				}
			}
			for k, seen := range mine {
				if !seen {
					t.Errorf("%s %s: no ptxas report for %s:\n%s", typ, dt, k, log)
				}
			}
		}
	}
}
