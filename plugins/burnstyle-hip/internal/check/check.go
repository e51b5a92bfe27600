// Package check verifies the GPU model against the CPU float64 model of
// harness/workload/ttt/reference and times it; the tests and tools/gpucheck share it.
package check

import (
	"fmt"
	"math"
	"sort"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/harness/workload/ttt/reference"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// Config builds a run configuration with the transformer backbone; set
// Backbone to "mamba" for the other (weights and reference follow it).
func Config(size, tttType, dtype string, innerOnly bool, batch, seqLen int) ttt.Config {
	return ttt.Config{ModelSize: size, TTTType: tttType, InnerOnly: innerOnly,
		Batch: batch, SeqLen: seqLen, MiniBatch: 16, Dtype: dtype, Backbone: "transformer", Warmup: 1, Repeats: 1}
}

// Small is the named size's widths (its head dim, heads, hidden and MLP
// width: the same compiled program and kernel code paths) with two layers,
// so the layer-to-layer paths still run, and a 256-token vocabulary: what
// the emulator tests run in place of a whole 125m model (gputtt.Options.Shape).
func Small(name string) *ttt.Size {
	s, err := ttt.LookupSize(name)
	if err != nil {
		panic(err) // tests name a size of the table
	}
	s.Name, s.Layers, s.Vocab = name+"-2layer", min(s.Layers, 2), min(s.Vocab, 256)
	return &s
}

// SmallInner is the named size's head dim (the inner kernels' program and
// code paths) with two heads, for inner-only runs, which use nothing else
// of the size: fewer blocks to emulate and a smaller float64 reference.
func SmallInner(name string) *ttt.Size {
	s := Small(name)
	s.Name, s.Heads = name+"-2head", min(s.Heads, 2)
	s.Hidden = s.Heads * s.HeadDim
	return s
}

// SizeOf is the model's dimensions: opt.Shape, else cfg.ModelSize's.
func SizeOf(cfg ttt.Config, opt gputtt.Options) (ttt.Size, error) {
	if opt.Shape != nil {
		return *opt.Shape, nil
	}
	return ttt.LookupSize(cfg.ModelSize)
}

// Inputs are perturbed weights (no parameter at its initial value) and
// random inputs for cfg, deterministic in seed.
func Inputs(cfg ttt.Config, seed int64) (s ttt.Size, w, in map[string]tensorfile.Tensor, err error) {
	if s, err = ttt.LookupSize(cfg.ModelSize); err != nil {
		return
	}
	w, in = InputsOf(cfg, s, seed)
	return
}

// InputsOf is Inputs for a model of dimensions s.
func InputsOf(cfg ttt.Config, s ttt.Size, seed int64) (w, in map[string]tensorfile.Tensor) {
	if cfg.InnerOnly {
		w = ttt.InitParams(ttt.InnerParams(s, cfg.TTTType, cfg.MiniBatch), seed, true)
		in = ttt.RandomInnerInputs(seed, cfg.Batch, s.Heads, cfg.SeqLen, s.HeadDim)
		return
	}
	w = ttt.PerturbedWeights(s, cfg.TTTType, cfg.MiniBatch, cfg.Backbone, seed)
	in = map[string]tensorfile.Tensor{"tokens": ttt.RandomTokens(seed, cfg.Batch, cfg.SeqLen, s.Vocab)}
	return
}

// Reference is the CPU model's float64 output for the same weights and inputs.
func Reference(cfg ttt.Config, s ttt.Size, w, in map[string]tensorfile.Tensor) ([]float64, error) {
	if cfg.InnerOnly {
		p, err := reference.NewInner[float64](w, "layers.0.ttt.", s.Heads, s.HeadDim, cfg.MiniBatch, cfg.TTTType == "mlp", ttt.BaseLR(cfg.TTTType))
		if err != nil {
			return nil, err
		}
		get := func(n string) []float64 { v, _ := in[n].Float64s(); return v }
		xq := get("xq")
		out := make([]float64, len(xq))
		p.Run(out, xq, get("xk"), get("xv"), get("gate"), cfg.Batch, cfg.SeqLen)
		return out, nil
	}
	m, err := reference.NewModel[float64](s, cfg.TTTType, cfg.Backbone, cfg.MiniBatch, w)
	if err != nil {
		return nil, err
	}
	tok, err := in["tokens"].Int32s()
	if err != nil {
		return nil, err
	}
	out, err := m.Forward(tok, cfg.Batch, cfg.SeqLen)
	return append([]float64(nil), out...), err
}

// Outcome is one verification.
type Outcome struct {
	RelL2, MaxAbs, Tol float64
	NaN                int
	Describe           string
}

func (o Outcome) Pass() bool { return o.NaN == 0 && o.RelL2 <= o.Tol }

// Verify runs cfg once on d (output poisoned first, so an unwritten element
// shows as NaN) and compares with the float64 reference.
func Verify(d *gpu.Device, cfg ttt.Config, seed int64, opt gputtt.Options) (Outcome, error) {
	s, err := SizeOf(cfg, opt)
	if err != nil {
		return Outcome{}, err
	}
	w, in := InputsOf(cfg, s, seed)
	ref, err := Reference(cfg, s, w, in)
	if err != nil {
		return Outcome{}, fmt.Errorf("reference: %w", err)
	}
	return VerifyWith(d, cfg, w, in, ref, opt)
}

// VerifyWith is Verify on given weights, inputs and reference, so several
// dtypes and options can share one float64 reference.
func VerifyWith(d *gpu.Device, cfg ttt.Config, w, in map[string]tensorfile.Tensor, ref []float64, opt gputtt.Options) (Outcome, error) {
	m, err := runPoisoned(d, cfg, w, in, opt)
	if err != nil {
		return Outcome{}, err
	}
	defer m.Close()
	got, _, err := m.Output()
	if err != nil {
		return Outcome{}, err
	}
	if len(got) != len(ref) {
		return Outcome{}, fmt.Errorf("output has %d elements, reference %d", len(got), len(ref))
	}
	o := Outcome{Tol: ttt.Workload{}.Tolerance(cfg.Result()), Describe: m.Describe()}
	var num, den float64
	for i, g := range got {
		if math.IsNaN(float64(g)) || math.IsInf(float64(g), 0) {
			o.NaN++
			continue
		}
		d := float64(g) - ref[i]
		num += d * d
		den += ref[i] * ref[i]
		o.MaxAbs = math.Max(o.MaxAbs, math.Abs(d))
	}
	o.RelL2 = math.Sqrt(num / den)
	return o, nil
}

// runPoisoned makes cfg's model on d from w, gives it in, poisons its output
// (an element a call misses then shows as NaN) and runs one call; the
// caller closes the model.
func runPoisoned(d *gpu.Device, cfg ttt.Config, w, in map[string]tensorfile.Tensor, opt gputtt.Options) (*gputtt.Model, error) {
	m, err := gputtt.NewModelWith(d, cfg, w, opt)
	if err != nil {
		return nil, err
	}
	err = SetInputs(m, cfg, in)
	if err == nil {
		err = m.Poison()
	}
	if err == nil {
		_, err = m.Run()
	}
	if err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// SetInputs gives m the tokens (forward) or the inner-loop inputs of in.
func SetInputs(m *gputtt.Model, cfg ttt.Config, in map[string]tensorfile.Tensor) error {
	if cfg.InnerOnly {
		return m.SetInnerInputs(in)
	}
	tok, err := in["tokens"].Int32s()
	if err != nil {
		return err
	}
	return m.SetTokens(tok)
}

// Timing is one configuration's device-event samples.
type Timing struct {
	Samples          []float64
	Median, Min      float64
	CompileMs, First float64
	PeakBytes        int64
	Describe         string
}

// Time follows the protocol: first call apart, warmup calls, then repeats.
// Default (unperturbed) weights, as the harness times.
func Time(d *gpu.Device, cfg ttt.Config, warmup, repeats int, opt gputtt.Options) (Timing, error) {
	s, err := ttt.LookupSize(cfg.ModelSize)
	if err != nil {
		return Timing{}, err
	}
	var w, in map[string]tensorfile.Tensor
	if cfg.InnerOnly {
		w = ttt.InitParams(ttt.InnerParams(s, cfg.TTTType, cfg.MiniBatch), 0, false)
		in = ttt.RandomInnerInputs(0, cfg.Batch, s.Heads, cfg.SeqLen, s.HeadDim)
	} else {
		w = ttt.DefaultWeights(s, cfg.TTTType, cfg.MiniBatch, cfg.Backbone, 0)
		in = map[string]tensorfile.Tensor{"tokens": ttt.RandomTokens(0, cfg.Batch, cfg.SeqLen, s.Vocab)}
	}
	m, err := gputtt.NewModelWith(d, cfg, w, opt)
	if err != nil {
		return Timing{}, err
	}
	defer m.Close()
	if err := SetInputs(m, cfg, in); err != nil {
		return Timing{}, err
	}
	t := Timing{CompileMs: m.CompileMs(), PeakBytes: m.PeakBytes(), Describe: m.Describe()}
	if t.First, err = m.Run(); err != nil {
		return t, err
	}
	for i := 0; i < warmup; i++ {
		if _, err := m.Run(); err != nil {
			return t, err
		}
	}
	for i := 0; i < repeats; i++ {
		ms, err := m.Run()
		if err != nil {
			return t, err
		}
		t.Samples = append(t.Samples, ms)
	}
	sorted := append([]float64(nil), t.Samples...)
	sort.Float64s(sorted)
	t.Median, t.Min = sorted[len(sorted)/2], sorted[0]
	if len(sorted)%2 == 0 {
		t.Median = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	return t, nil
}
