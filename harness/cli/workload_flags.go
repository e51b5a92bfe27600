package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// Allowed values of the uniform flags, shared by every command.
var (
	tttTypes  = []string{"linear", "mlp"}
	dtypes    = []string{"float32", "tf32", "bfloat16", "float16", "float64"}
	devices   = []string{"auto", "cpu", "cuda", "rocm"}
	backbones = []string{"transformer", "mamba"}
)

// workloadFlags are the uniform flags every backend understands.
type workloadFlags struct {
	modelSize, tttType, dtype, backbone, device string
	backward, innerOnly                         bool
	batch, seqLen, miniBatch, warmup, repeats   int
}

func (w *workloadFlags) register(fs *pflag.FlagSet, defaultSize string) {
	fs.StringVar(&w.modelSize, "model-size", defaultSize, "model size: "+strings.Join(append(ttt.SizeNames(), "1.3b"), ", "))
	fs.StringVar(&w.tttType, "ttt-type", "linear", "inner model: "+strings.Join(tttTypes, ", "))
	fs.BoolVar(&w.backward, "backward", false, "time forward plus the gradient of the loss")
	fs.BoolVar(&w.innerOnly, "inner-only", false, "time one TTT layer's inner loop alone")
	fs.IntVar(&w.batch, "batch", 1, "sequences per call")
	fs.IntVar(&w.seqLen, "seq-len", 2048, "tokens per sequence (a multiple of --mini-batch)")
	fs.IntVar(&w.miniBatch, "mini-batch", 16, "TTT mini-batch size K")
	fs.StringVar(&w.dtype, "dtype", "float32", "precision: "+strings.Join(dtypes, ", "))
	fs.StringVar(&w.backbone, "backbone", "transformer", "backbone: "+strings.Join(backbones, ", "))
	fs.IntVar(&w.warmup, "warmup", 3, "untimed calls after the first (compile) call")
	fs.IntVar(&w.repeats, "repeats", 10, "timed calls")
	fs.StringVar(&w.device, "device", "auto", "device: "+strings.Join(devices, ", "))
}

// config checks every flag and returns the configuration; each error names
// the flag, the value given and what is allowed.
func (w *workloadFlags) config() (result.Config, error) {
	size, err := ttt.LookupSize(w.modelSize)
	if err != nil {
		return result.Config{}, usagef("--model-size %q is not a model size (allowed: %s)", w.modelSize, strings.Join(append(ttt.SizeNames(), "1.3b"), ", "))
	}
	if err := oneOf("--ttt-type", w.tttType, tttTypes); err != nil {
		return result.Config{}, err
	}
	if err := oneOf("--dtype", w.dtype, dtypes); err != nil {
		return result.Config{}, err
	}
	if err := oneOf("--backbone", w.backbone, backbones); err != nil {
		return result.Config{}, err
	}
	if err := oneOf("--device", w.device, devices); err != nil {
		return result.Config{}, err
	}
	for _, f := range []struct {
		name string
		v    int
		min  int
	}{{"--batch", w.batch, 1}, {"--seq-len", w.seqLen, 1}, {"--mini-batch", w.miniBatch, 1}, {"--warmup", w.warmup, 0}, {"--repeats", w.repeats, 1}} {
		if f.v < f.min {
			return result.Config{}, usagef("%s %d is too small (allowed: %d or more)", f.name, f.v, f.min)
		}
	}
	if w.seqLen%w.miniBatch != 0 {
		lo := w.seqLen / w.miniBatch * w.miniBatch
		return result.Config{}, usagef("--seq-len %d is not a multiple of --mini-batch %d (allowed: multiples of %d, e.g. %d or %d)",
			w.seqLen, w.miniBatch, w.miniBatch, max(lo, w.miniBatch), lo+w.miniBatch)
	}
	if w.backward && w.innerOnly {
		return result.Config{}, usagef("--backward and --inner-only were both given (allowed: one of them, or neither for forward)")
	}
	return result.Config{Workload: "ttt", ModelSize: size.Name, TTTType: w.tttType, Backward: w.backward,
		InnerOnly: w.innerOnly, Batch: w.batch, SeqLen: w.seqLen, MiniBatch: w.miniBatch, Dtype: w.dtype,
		Backbone: w.backbone, Warmup: w.warmup, Repeats: w.repeats}, nil
}

func oneOf(flag, value string, allowed []string) error {
	if slices.Contains(allowed, value) {
		return nil
	}
	return usagef("%s %q is not allowed (allowed: %s)", flag, value, strings.Join(allowed, ", "))
}

// parseFlags parses args, turning pflag's errors into usage errors and
// --help into printed usage.
func parseFlags(a *App, fs *pflag.FlagSet, args []string) (help bool, err error) {
	fs.SetOutput(a.Stderr)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			fmt.Fprintf(a.Stdout, "Usage of xbench %s:\n%s", fs.Name(), fs.FlagUsages())
			return true, nil
		}
		return false, usagef("%s (see xbench %s --help)", err, fs.Name())
	}
	if fs.NArg() > 0 {
		return false, usagef("unexpected argument %q (xbench %s takes flags only)", fs.Arg(0), fs.Name())
	}
	return false, nil
}
