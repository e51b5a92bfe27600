package ttt

import (
	"fmt"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload"
)

// Name is the workload's name.
const Name = "ttt"

// Workload is the TTT language model of docs/workloads/ttt.md: its
// declarations. Its float64 reference is the model in the reference
// package, whose Workload (this one with References) is the registered one.
type Workload struct{}

var _ workload.Workload = Workload{}

// Name implements workload.Workload.
func (Workload) Name() string { return Name }

// Description implements workload.Workload.
func (Workload) Description() string {
	return "TTT (test-time training) language model, forward, training step or one layer's inner loop"
}

// Params implements workload.Workload; the flags keep the names they had
// before the workload axis existed.
func (Workload) Params() []workload.Param {
	return []workload.Param{
		{Name: KeyModelSize, Kind: workload.Enum, Default: "125m", Allowed: SizeNames(),
			Aliases: SizeAliases, Help: "model size", SizeAxis: true, Scale: true},
		{Name: KeyTTTType, Kind: workload.Enum, Default: "linear", Allowed: []string{"linear", "mlp"}, Help: "inner model", SizeAxis: true},
		{Name: KeyBatch, Kind: workload.Int, Default: "1", Min: 1, Max: 1 << 16, Help: "sequences per call", SizeAxis: true, Scale: true},
		{Name: KeySeqLen, Kind: workload.Int, Default: "2048", Min: 1, Max: 1 << 24, Help: "tokens per sequence (a multiple of --mini-batch)", SizeAxis: true, Scale: true, Length: true},
		{Name: KeyMiniBatch, Kind: workload.Int, Default: "16", Min: 1, Max: 1 << 12, Help: "TTT mini-batch size K"},
		{Name: KeyDtype, Kind: workload.Enum, Default: "float32",
			Allowed: []string{"float32", "tf32", "bfloat16", "float16", "float64"}, Help: "precision"},
		{Name: KeyBackbone, Kind: workload.Enum, Default: "transformer", Allowed: []string{"transformer", "mamba"}, Help: "backbone"},
	}
}

// Phases implements workload.Workload: backward is the training step
// (forward plus the gradient of the loss).
func (Workload) Phases() []string {
	return []string{workload.PhaseForward, workload.PhaseBackward, workload.PhaseInnerOnly}
}

// maxTokens bounds batch x seq-len, so token counts and byte sizes derived
// from them stay far from overflow.
const maxTokens = 1 << 26

// Check implements workload.Workload.
func (Workload) Check(c result.Config) error {
	t := From(c)
	if t.SeqLen%t.MiniBatch != 0 {
		lo := t.SeqLen / t.MiniBatch * t.MiniBatch
		return fmt.Errorf("--seq-len %d is not a multiple of --mini-batch %d (allowed: multiples of %d, e.g. %d or %d)",
			t.SeqLen, t.MiniBatch, t.MiniBatch, max(lo, t.MiniBatch), lo+t.MiniBatch)
	}
	if int64(t.Batch)*int64(t.SeqLen) > maxTokens {
		return fmt.Errorf("--batch %d times --seq-len %d is %d tokens (allowed: at most %d)",
			t.Batch, t.SeqLen, int64(t.Batch)*int64(t.SeqLen), maxTokens)
	}
	return nil
}

// Label implements workload.Workload: "125m linear float32 L=2048".
func (Workload) Label(c result.Config) string {
	t := From(c)
	l := fmt.Sprintf("%s %s %s L=%d", t.ModelSize, t.TTTType, t.Dtype, t.SeqLen)
	if t.Batch != 1 {
		l += fmt.Sprintf(" B=%d", t.Batch)
	}
	if t.MiniBatch != 16 {
		l += fmt.Sprintf(" K=%d", t.MiniBatch)
	}
	if t.Backbone != "transformer" {
		l += " " + t.Backbone
	}
	return l
}

// Cost implements workload.Workload.
func (Workload) Cost(c result.Config) (workload.Cost, error) { return CostOf(From(c)) }

// Rank implements workload.Workload: the FLOPs of one call (tripled for
// the training step), which time and memory grow with.
func (Workload) Rank(c result.Config) float64 {
	cost, err := CostOf(From(c))
	if err != nil {
		return 0
	}
	return cost.FLOPs
}

// Throughput implements workload.Workload: tokens per second.
func (Workload) Throughput(c result.Config, medianMs float64) workload.Throughput {
	if medianMs <= 0 {
		return workload.Throughput{Unit: "tokens/s"}
	}
	return workload.Throughput{Value: float64(From(c).Tokens()) / (medianMs / 1000), Unit: "tokens/s"}
}

// Fixtures implements workload.Workload: perturbed weights (norm weights
// and biases away from their initial values, so bugs there cannot hide) and
// tokens, or the inner loop's inputs.
func (Workload) Fixtures(c result.Config, seed int64) (workload.Fixtures, error) {
	t := From(c)
	s, err := LookupSize(t.ModelSize)
	if err != nil {
		return workload.Fixtures{}, err
	}
	fx := workload.Fixtures{Weights: PerturbedWeights(s, t.TTTType, t.MiniBatch, t.Backbone, seed)}
	if t.InnerOnly {
		fx.Inputs = RandomInnerInputs(seed, t.Batch, s.Heads, t.SeqLen, s.HeadDim)
	} else {
		fx.Inputs = map[string]tensorfile.Tensor{"tokens": RandomTokens(seed, t.Batch, t.SeqLen, s.Vocab)}
	}
	return fx, nil
}

// Output implements workload.Workload.
func (Workload) Output(c result.Config) string {
	if c.Phase == workload.PhaseInnerOnly {
		return "out"
	}
	return "logits"
}

// Tolerance implements workload.Workload: relative L2 error by dtype.
func (Workload) Tolerance(c result.Config) float64 {
	switch c.Dtype() {
	case "float64":
		return 1e-9
	case "float32":
		return 1e-4
	case "tf32":
		return 1e-2
	default: // bfloat16, float16
		return 5e-2
	}
}

// SmallDefaults implements workload.Smaller: the tiny model at 64 tokens.
func (Workload) SmallDefaults() map[string]string {
	return map[string]string{KeyModelSize: "tiny", KeySeqLen: "64"}
}
