// Command gpucheck verifies the GPU model against the CPU float64 model and
// times it, in one process, for one device lease: correctness first (tiny
// and 125m, linear and mlp, float32 and bfloat16, forward and inner-only,
// the transformer and mamba backbones, the training step's logits, loss and
// gradients: backward.go),
// then the protocol's timing (first call apart, warmup, repeats, device
// events), per-part profiles and the cuBLAS ceilings docs/FLOOR.md uses.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/gemm"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

type vcase struct {
	size, typ string
	inner     bool
	B, L      int
	dtypes    []string
	opt       gputtt.Options
	tag       string
}

type tcase struct {
	typ, dtype string
	inner      bool
	opt        gputtt.Options
	tag        string
	profile    bool
}

func main() {
	device := flag.String("device", "cuda", "cuda, rocm or auto")
	verify := flag.Bool("verify", true, "check against the CPU float64 model")
	timing := flag.Bool("time", true, "time 125m at L=2048")
	variants := flag.Bool("variants", true, "also time alternatives (threads, GEMM engine, math mode)")
	repeats := flag.Int("repeats", 20, "timed calls per configuration")
	jsonOut := flag.String("json", "", "write every number here")
	only := flag.String("only", "", "verify only sizes containing this")
	tsize := flag.String("tsize", "125m", "model size to time")
	tlen := flag.Int("tlen", 2048, "sequence length to time")
	ceilings := flag.Bool("ceilings", true, "measure cuBLAS float32 and bf16 ceilings")
	chunks := flag.String("chunks", "", "time only the forward at these chunk counts (e.g. 1,2,4,8)")
	chunkTypes := flag.String("chunktypes", "linear", "inner models timed by -chunks (linear, mlp or both)")
	btypes := flag.String("btypes", "linear,mlp", "inner models of the training step's timed cases (linear, mlp or both)")
	forward := flag.Bool("forward", true, "verify and time the forward and inner-only phases")
	backward := flag.Bool("backward", true, "verify and time the training step (phase backward)")
	exchanges := flag.String("exchanges", "", "only the cluster kernel's exchanges: verify, then time inner-only and the forward side by side (X or CSxX, e.g. 1,2,3,8x3; exchange.go)")
	rounds := flag.Int("rounds", 2, "-exchanges: timing rounds over the variants")
	xtrain := flag.Bool("xtrain", true, "-exchanges: also verify the training step (float32, tiny and 125m) at each exchange")
	steptrace := flag.String("steptrace", "", "time only these step variants (steptrace.go: nodeprio,launchprio,eager,serial,fwd4,...) with a CUPTI timeline of each")
	bcases := flag.String("bcases", "", "verify only the training-step cases whose size/type/tag. contains one of these words (e.g. tiny/,125m/linear/.)")
	timeline := flag.String("timeline", "", "-steptrace: write every kernel record of each variant's last sample here (CSV)")
	flag.Parse()
	var xvs []exchangeVariant
	if *exchanges != "" {
		var err error
		if xvs, err = parseExchanges(*exchanges); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}

	t0 := time.Now()
	d, err := gpu.Open(*device)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(1)
	}
	defer d.Close()
	info := d.Info()
	fmt.Printf("device: %s | %s | count %d | dense: %s\n", info.Name, info.Driver, info.Count, d.BLAS())
	report := map[string]any{"device": info}
	fails := 0
	if xvs != nil {
		var f int
		report["exchanges"], f = checkExchanges(d, xvs, *tsize, *tlen, *repeats, *rounds, *xtrain)
		fails += f
		*verify, *timing, *ceilings = false, false, false
	}

	if *verify && *forward {
		both := []string{"float32", "bfloat16"}
		cases := []vcase{
			{"tiny", "linear", false, 2, 64, both, gputtt.Options{}, ""},
			{"tiny", "mlp", false, 2, 64, both, gputtt.Options{}, ""},
			{"tiny", "linear", true, 2, 64, both, gputtt.Options{}, ""},
			{"tiny", "mlp", true, 2, 64, both, gputtt.Options{}, ""},
			{"tiny", "linear", false, 2, 64, both, gputtt.Options{OwnGEMM: true}, "own-gemm"},
			{"125m", "linear", false, 1, 128, both, gputtt.Options{}, ""},
			{"125m", "mlp", false, 1, 128, both, gputtt.Options{}, ""},
			{"125m", "linear", true, 1, 2048, both, gputtt.Options{}, ""},
			{"125m", "mlp", true, 1, 2048, both, gputtt.Options{}, ""},
			{"125m", "linear", true, 2, 256, both, gputtt.Options{InnerThreads: 512}, "512thr"},
			{"125m", "linear", true, 1, 2048, both, gputtt.Options{InnerVariant: 2}, "v2"},
			{"125m", "linear", false, 1, 128, both, gputtt.Options{InnerVariant: 2}, "v2"},
			{"125m", "linear", true, 2, 256, both, gputtt.Options{InnerVariant: 3, ClusterSize: 2}, "cl2"},
			{"125m", "linear", false, 1, 128, both, gputtt.Options{Chunks: 1}, "flat"},
			{"125m", "linear", false, 2, 256, both, gputtt.Options{Chunks: 3}, "ch3"},
			{"125m", "linear", false, 1, 256, both, gputtt.Options{Chunks: 16}, "ch16"},
			{"125m", "linear", false, 2, 256, both, gputtt.Options{Chunks: 3, Eager: true}, "ch3-eager"},
			{"125m", "mlp", false, 1, 128, both, gputtt.Options{Eager: true}, "eager"},
			{"125m", "mlp", false, 2, 256, both, gputtt.Options{Chunks: 3}, "ch3"},
			{"tiny", "linear", true, 2, 64, both, gputtt.Options{InnerVariant: 3, ClusterSize: 1}, "cl1"},
			{"tiny", "linear", true, 2, 64, both, gputtt.Options{InnerVariant: 3, ClusterSize: 2}, "cl2"},
			// The mamba backbone's forward (gpu/mamba.go), flat and chunked
			// (the halo between chunks): a tag starting "mamba" picks it.
			{"tiny", "linear", false, 2, 64, both, gputtt.Options{}, "mamba"},
			{"tiny", "mlp", false, 2, 64, both, gputtt.Options{}, "mamba"},
			{"125m", "linear", false, 1, 128, both, gputtt.Options{}, "mamba"},
			{"125m", "mlp", false, 1, 128, both, gputtt.Options{}, "mamba"},
			{"125m", "linear", false, 2, 256, both, gputtt.Options{Chunks: 3}, "mamba-ch3"},
		}
		var rows []map[string]any
		fmt.Printf("\n%-5s %-6s %-8s %-9s %-5s %-9s %-10s %-10s %s\n", "size", "type", "dtype", "phase", "L", "tag", "rel_l2", "max_abs", "verdict")
		for _, c := range cases {
			if !strings.Contains(c.size, *only) {
				continue
			}
			cfg := check.Config(c.size, c.typ, "float32", c.inner, c.B, c.L)
			if strings.HasPrefix(c.tag, "mamba") {
				cfg.Backbone = "mamba"
			}
			s, w, in, err := check.Inputs(cfg, 11)
			if err != nil {
				fatal(err)
			}
			rt := time.Now()
			ref, err := check.Reference(cfg, s, w, in)
			if err != nil {
				fatal(err)
			}
			refMs := time.Since(rt).Seconds() * 1e3
			for _, dt := range c.dtypes {
				cfg.Dtype = dt
				o, err := check.VerifyWith(d, cfg, w, in, ref, c.opt)
				verdict := "PASS"
				if err != nil {
					verdict, fails = "ERROR "+err.Error(), fails+1
				} else if !o.Pass() {
					verdict, fails = fmt.Sprintf("FAIL (tol %.g, %d NaN)", o.Tol, o.NaN), fails+1
				}
				fmt.Printf("%-5s %-6s %-8s %-9s %-5d %-9s %-10.3g %-10.3g %s\n", c.size, c.typ, dt, cfg.Phase(), c.L, c.tag, o.RelL2, o.MaxAbs, verdict)
				rows = append(rows, map[string]any{"size": c.size, "type": c.typ, "dtype": dt, "phase": cfg.Phase(),
					"L": c.L, "B": c.B, "tag": c.tag, "rel_l2": o.RelL2, "max_abs": o.MaxAbs, "nan": o.NaN,
					"verdict": verdict, "ref_ms": refMs, "describe": o.Describe})
			}
		}
		report["verify"] = rows
	}
	if *verify && *backward {
		rows, f := verifyBackward(d, *only, *bcases)
		report["verify_backward"], fails = rows, fails+f
	}
	if *steptrace != "" {
		report["steptrace"] = stepTrace(d, *steptrace, *timeline, *tsize, *tlen, *repeats)
	} else if *chunks != "" {
		for _, typ := range strings.Split(*chunkTypes, ",") {
			report["chunks_"+typ] = timeChunks(d, typ, *chunks, *tsize, *tlen, *repeats)
		}
	} else if *timing {
		if *forward {
			report["timing"] = timeAll(d, *variants, *ceilings, *tsize, *tlen, *repeats)
		}
		if *backward {
			report["timing_backward"] = timeBackward(d, *tsize, *tlen, *repeats, *btypes)
		}
	}
	report["wall_s"] = time.Since(t0).Seconds()
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(report, "", " ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	fmt.Printf("\ngpucheck done in %.1f s, %d verification failures\n", time.Since(t0).Seconds(), fails)
	if fails > 0 {
		os.Exit(2)
	}
}

func timeAll(d *gpu.Device, variants, ceilings bool, size string, L, repeats int) []map[string]any {
	var rows []map[string]any
	if !ceilings {
	} else if tf, err := gemm.Bench(d, false, 4096, 4096, 4096, 10); err == nil {
		fmt.Printf("\ncuBLAS ceiling: float32 (pedantic) 4096^3 %.1f TFLOP/s", tf)
		rows = append(rows, map[string]any{"ceiling": "sgemm 4096^3", "tflops": tf})
	}
	if !ceilings {
	} else if tf, err := gemm.Bench(d, true, 8192, 8192, 8192, 10); err == nil {
		fmt.Printf(", bf16 8192^3 %.1f TFLOP/s\n", tf)
		rows = append(rows, map[string]any{"ceiling": "bf16 gemmEx 8192^3", "tflops": tf})
	}
	cases := []tcase{
		{"linear", "float32", false, gputtt.Options{}, "", true},
		{"linear", "bfloat16", false, gputtt.Options{}, "", true},
		{"mlp", "float32", false, gputtt.Options{}, "", true},
		{"mlp", "bfloat16", false, gputtt.Options{}, "", false},
		{"linear", "float32", true, gputtt.Options{}, "", false},
		{"linear", "bfloat16", true, gputtt.Options{}, "", false},
		{"mlp", "float32", true, gputtt.Options{}, "", false},
		{"mlp", "bfloat16", true, gputtt.Options{}, "", false},
		// training steps (tag "bwd"; a tag starting "mamba" picks that backbone)
		{"linear", "float32", false, gputtt.Options{}, "bwd", false},
		{"linear", "float32", false, gputtt.Options{}, "mamba-bwd", true},
	}
	if variants {
		v2 := gputtt.Options{InnerVariant: 2}
		cases = append(cases,
			tcase{"linear", "float32", true, v2, "v2", false},
			tcase{"linear", "bfloat16", true, v2, "v2", false},
			tcase{"linear", "float32", false, v2, "v2", true},
			tcase{"linear", "bfloat16", false, v2, "v2", true},
			tcase{"linear", "float32", true, gputtt.Options{InnerVariant: 3, ClusterSize: 2}, "cl2", false},
			tcase{"linear", "bfloat16", true, gputtt.Options{InnerVariant: 3, ClusterSize: 2}, "cl2", false},
			tcase{"linear", "float32", true, gputtt.Options{InnerVariant: 3, ClusterSize: 8}, "cl8", false},
		)
	}
	fmt.Printf("\n%s B=1 L=%d K=16, %d timed calls after 3 warmup (device events)\n", size, L, repeats)
	fmt.Printf("%-6s %-8s %-10s %-12s %-9s %-9s %-9s %-10s %s\n", "type", "dtype", "phase", "tag", "median", "min", "first", "compile", "peak_MiB")
	for _, c := range cases {
		cfg := check.Config(size, c.typ, c.dtype, c.inner, 1, L)
		cfg.Backward = strings.HasSuffix(c.tag, "bwd")
		if strings.HasPrefix(c.tag, "mamba") {
			cfg.Backbone = "mamba"
		}
		t, err := check.Time(d, cfg, 3, repeats, c.opt)
		if err != nil {
			fmt.Printf("%-6s %-8s %-10s %-12s ERROR %v\n", c.typ, c.dtype, cfg.Phase(), c.tag, err)
			rows = append(rows, map[string]any{"type": c.typ, "dtype": c.dtype, "phase": cfg.Phase(), "tag": c.tag, "error": err.Error()})
			continue
		}
		fmt.Printf("%-6s %-8s %-10s %-12s %-9.3f %-9.3f %-9.2f %-10.1f %.0f\n", c.typ, c.dtype, cfg.Phase(), c.tag,
			t.Median, t.Min, t.First, t.CompileMs, float64(t.PeakBytes)/(1<<20))
		row := map[string]any{"type": c.typ, "dtype": c.dtype, "phase": cfg.Phase(), "tag": c.tag, "median_ms": t.Median,
			"min_ms": t.Min, "first_ms": t.First, "compile_ms": t.CompileMs, "peak_bytes": t.PeakBytes,
			"samples_ms": t.Samples, "describe": t.Describe}
		if c.inner {
			if tk, err := ticks(d, cfg, c.opt); err != nil {
				fmt.Println("   ticks:", err)
			} else {
				row["ticks_per_step"] = tk
				fmt.Printf("   cycles/step by phase: %v\n", tk)
			}
		}
		if c.profile {
			parts, err := profile(d, cfg, c.opt)
			if err != nil {
				fmt.Println("   profile:", err)
			} else {
				row["profile_ms"] = parts
				fmt.Println("   parts:", formatParts(parts))
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// loaded is a model for cfg on d with check's seed-0 weights and inputs set
// (an inner-only training step's include the output gradient dout).
func loaded(d *gpu.Device, cfg ttt.Config, opt gputtt.Options) (*gputtt.Model, error) {
	_, w, in, err := check.Inputs(cfg, 0)
	if cfg.InnerOnly && cfg.Backward {
		_, w, in, err = check.InnerTrainInputs(cfg, 0)
	}
	if err != nil {
		return nil, err
	}
	m, err := gputtt.NewModelWith(d, cfg, w, opt)
	if err != nil {
		return nil, err
	}
	if err := check.SetInputs(m, cfg, in); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

func profile(d *gpu.Device, cfg ttt.Config, opt gputtt.Options) (map[string]float64, error) {
	m, err := loaded(d, cfg, opt)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	for i := 0; i < 3; i++ {
		if _, err := m.Run(); err != nil {
			return nil, err
		}
	}
	return m.Profile()
}

func ticks(d *gpu.Device, cfg ttt.Config, opt gputtt.Options) ([]float64, error) {
	m, err := loaded(d, cfg, opt)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	if _, err := m.Run(); err != nil {
		return nil, err
	}
	t, err := m.InnerTicks()
	var out []float64
	for _, v := range t {
		if v > 0 {
			out = append(out, float64(int(v)))
		}
	}
	return out, err
}

func formatParts(p map[string]float64) string {
	keys := make([]string, 0, len(p))
	total := 0.0
	for k, v := range p {
		keys = append(keys, k)
		total += v
	}
	sort.Slice(keys, func(i, j int) bool { return p[keys[i]] > p[keys[j]] })
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %.3f, ", k, p[k])
	}
	fmt.Fprintf(&b, "total %.3f ms", total)
	return b.String()
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "gpucheck:", err)
	os.Exit(1)
}

// timeChunks times the forward of inner model typ, float32 and bfloat16, at
// each chunk count of list, and the largest with every lane at one priority.
func timeChunks(d *gpu.Device, typ, list, size string, L, repeats int) []map[string]any {
	var rows []map[string]any
	var opts []gputtt.Options
	for _, f := range strings.Split(list, ",") {
		var n int
		if _, err := fmt.Sscan(f, &n); err != nil || n < 1 {
			fatal(fmt.Errorf("-chunks %q: %q is not a positive count", list, f))
		}
		// each count replayed as one graph (the default) and launched eagerly,
		// which tells how much of an eager call the host's launching costs
		opts = append(opts, gputtt.Options{Chunks: n}, gputtt.Options{Chunks: n, Eager: true})
	}
	last := opts[len(opts)-2]
	last.FlatPriority = true
	opts = append(opts, last)
	fmt.Printf("\n%s %s forward B=1 L=%d, %d timed calls after 3 warmup\n", size, typ, L, repeats)
	for _, dt := range []string{"float32", "bfloat16"} {
		for _, o := range opts {
			cfg := check.Config(size, typ, dt, false, 1, L)
			tag := fmt.Sprintf("ch%d", o.Chunks)
			if o.Eager {
				tag += "-eager"
			}
			if o.FlatPriority {
				tag += "-flatprio"
			}
			t, err := check.Time(d, cfg, 3, repeats, o)
			if err != nil {
				fmt.Printf("%-8s %-14s ERROR %v\n", dt, tag, err)
				continue
			}
			fmt.Printf("%-8s %-14s median %8.3f  min %8.3f  peak %5.0f MiB\n", dt, tag, t.Median, t.Min, float64(t.PeakBytes)/(1<<20))
			rows = append(rows, map[string]any{"dtype": dt, "tag": tag, "median_ms": t.Median, "min_ms": t.Min,
				"samples_ms": t.Samples, "peak_bytes": t.PeakBytes, "describe": t.Describe})
		}
	}
	return rows
}
