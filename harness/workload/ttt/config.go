package ttt

import (
	"strconv"

	"github.com/xbench/xbench/harness/result"
)

// Config is the typed view of a TTT configuration: result.Config carries
// the parameters as key/value strings, and code that computes with them
// (the cost model, the native backend) reads them through this struct.
type Config struct {
	ModelSize string
	TTTType   string
	Backward  bool // phase backward: the training step, forward plus gradient
	InnerOnly bool // phase inner_only: one layer's inner loop alone
	Batch     int
	SeqLen    int
	MiniBatch int
	Dtype     string
	Backbone  string
	Warmup    int
	Repeats   int
}

// Parameter names of the TTT workload in result.Config.Params.
const (
	KeyModelSize = "model_size"
	KeyTTTType   = "ttt_type"
	KeyBatch     = "batch"
	KeySeqLen    = "seq_len"
	KeyMiniBatch = "mini_batch"
	KeyDtype     = "dtype"
	KeyBackbone  = "backbone"
)

// From reads a TTT configuration; it assumes the harness validated it.
func From(c result.Config) Config {
	return Config{
		ModelSize: c.Get(KeyModelSize), TTTType: c.Get(KeyTTTType),
		Backward: c.Phase == "backward", InnerOnly: c.Phase == "inner_only",
		Batch: c.Int(KeyBatch), SeqLen: c.Int(KeySeqLen), MiniBatch: c.Int(KeyMiniBatch),
		Dtype: c.Get(KeyDtype), Backbone: c.Get(KeyBackbone), Warmup: c.Warmup, Repeats: c.Repeats,
	}
}

// Result is the key/value form of c.
func (c Config) Result() result.Config {
	return result.Config{Workload: Name, Phase: c.Phase(), Warmup: c.Warmup, Repeats: c.Repeats,
		Params: map[string]string{
			KeyModelSize: c.ModelSize, KeyTTTType: c.TTTType, KeyBatch: strconv.Itoa(c.Batch),
			KeySeqLen: strconv.Itoa(c.SeqLen), KeyMiniBatch: strconv.Itoa(c.MiniBatch),
			KeyDtype: c.Dtype, KeyBackbone: c.Backbone,
		}}
}

// Phase names the part of the model a configuration times.
func (c Config) Phase() string {
	switch {
	case c.InnerOnly:
		return "inner_only"
	case c.Backward:
		return "backward"
	default:
		return "forward"
	}
}

// Tokens is the number of tokens one timed call processes.
func (c Config) Tokens() int { return c.Batch * c.SeqLen }
