package ttt

import (
	"encoding/binary"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload"
)

// Every tensor gets its own stream (workload.Stream), keyed by the seed and
// a hash of its name. Values then do not depend on which other tensors are
// generated or in what order, so an inner-only run's layer-0 tensors equal
// the full model's, and tensors can be generated in parallel.
var stream = workload.Stream

// DefaultWeights is the spec's default initialisation as F32: matrices and
// embeddings N(0, 0.02), norm weights 1, biases and tok_delta 0.
func DefaultWeights(s Size, tttType string, miniBatch int, backbone string, seed int64) map[string]tensorfile.Tensor {
	return InitParams(Params(s, tttType, miniBatch, backbone), seed, false)
}

// PerturbedWeights are weights for verification runs, away from every
// initial value so that a bug in a norm weight or bias term shows: norm
// weights 1+N(0,0.1), biases and tok_delta small nonzero normals, matrices
// N(0,0.02). Deterministic in seed.
func PerturbedWeights(s Size, tttType string, miniBatch int, backbone string, seed int64) map[string]tensorfile.Tensor {
	return InitParams(Params(s, tttType, miniBatch, backbone), seed, true)
}

// InitParams generates the given parameters as F32 tensors, with the default
// initialisation or (perturbed) the verification one.
func InitParams(ps []Param, seed int64, perturbed bool) map[string]tensorfile.Tensor {
	out := make(map[string]tensorfile.Tensor, len(ps))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, p := range ps {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			t := initParam(p, seed, perturbed)
			mu.Lock()
			out[p.Name] = t
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// initParam draws one tensor straight into its little-endian bytes, so a
// large model is not held twice in memory.
func initParam(p Param, seed int64, perturbed bool) tensorfile.Tensor {
	n := p.Elements()
	data := make([]byte, 4*n)
	put := func(i int, v float64) { binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(v))) }
	mean, std := 0.0, 0.0
	switch p.Init {
	case InitNormal:
		std = InitStd
	case InitOnes:
		mean = 1
		if perturbed {
			std = 0.1
		}
	case InitZeros:
		if perturbed {
			std = perturbedBiasStd(p.Name)
		}
	}
	if std == 0 {
		for i := 0; i < n; i++ {
			put(i, mean)
		}
	} else {
		r := stream(seed, p.Name)
		for i := 0; i < n; i++ {
			put(i, mean+std*r.NormFloat64())
		}
	}
	shape := append([]int(nil), p.Shape...)
	return tensorfile.Tensor{DType: tensorfile.DTypeF32, Shape: shape, Data: data}
}

// perturbedBiasStd picks each zero-initialised tensor's spread: large enough
// to matter, small enough to keep activations and learning rates sane.
func perturbedBiasStd(name string) float64 {
	switch {
	case strings.HasSuffix(name, "tok_delta"):
		return 0.05
	case strings.HasSuffix(name, "lr_b"):
		return 0.1
	case strings.HasSuffix(name, "ln_b"), strings.HasSuffix(name, "post_norm_b"):
		return 0.05
	default: // b1, b2, conv biases
		return 0.02
	}
}

// RandomTokens are uniform token ids in [0, vocab), I32 [batch, seqLen].
func RandomTokens(seed int64, batch, seqLen, vocab int) tensorfile.Tensor {
	r := stream(seed, "tokens")
	v := make([]int32, batch*seqLen)
	for i := range v {
		v[i] = int32(r.IntN(vocab))
	}
	return tensorfile.I32([]int{batch, seqLen}, v)
}

// RandomInnerInputs are an inner-only run's inputs: "xq", "xk", "xv" F32
// [B, nh, L, f] ~ N(0, 0.5^2) (standing for already rotated projections) and
// "gate" F32 [B, nh, L], the sigmoid of N(0, 1), so in (0, 1).
func RandomInnerInputs(seed int64, batch, heads, seqLen, headDim int) map[string]tensorfile.Tensor {
	shape := []int{batch, heads, seqLen, headDim}
	out := map[string]tensorfile.Tensor{}
	for _, name := range []string{"xq", "xk", "xv"} {
		r := stream(seed, name)
		v := make([]float32, batch*heads*seqLen*headDim)
		for i := range v {
			v[i] = float32(0.5 * r.NormFloat64())
		}
		out[name] = tensorfile.F32(shape, v)
	}
	r := stream(seed, "gate")
	g := make([]float32, batch*heads*seqLen)
	for i := range g {
		g[i] = float32(1 / (1 + math.Exp(-r.NormFloat64())))
	}
	out["gate"] = tensorfile.F32([]int{batch, heads, seqLen}, g)
	return out
}
