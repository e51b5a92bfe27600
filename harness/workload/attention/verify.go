package attention

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload"
)

// backwardPhase says whether cfg's phase computes the gradients.
func backwardPhase(cfg result.Config) bool {
	return cfg.Phase == workload.PhaseBackward || cfg.Phase == workload.PhaseBoth
}

// Fixtures are q, k, v (and dout for the backward phases) as F32 tensors,
// no weights. q and k are uniform in [-2, 2), so the scores have a standard
// deviation near 4/3 and the softmax is neither flat nor one-hot; v and dout
// uniform in [-1, 1). Values are rounded to the dtype, so every backend
// starts from exactly the numbers of the reference.
func (Workload) Fixtures(cfg result.Config, seed int64) (workload.Fixtures, error) {
	d, err := lookupDtype(cfg.Dtype())
	if err != nil {
		return workload.Fixtures{}, err
	}
	s := ShapeOf(cfg)
	in := map[string]tensorfile.Tensor{
		"q": random(workload.Stream(seed, "q"), d.round, s.QShape(), 2),
		"k": random(workload.Stream(seed, "k"), d.round, s.KShape(), 2),
		"v": random(workload.Stream(seed, "v"), d.round, s.KShape(), 1),
	}
	if backwardPhase(cfg) {
		in["dout"] = random(workload.Stream(seed, "dout"), d.round, s.QShape(), 1)
	}
	return workload.Fixtures{Weights: map[string]tensorfile.Tensor{}, Inputs: in}, nil
}

// random draws a tensor uniform in [-span, span) in row-major order and
// writes it straight into F32 bytes. 2·span·Float32() is exact (Float32 is
// on a 2^-24 grid and span a power of two), and so is the subtraction.
func random(r *rand.Rand, round func(float32) float32, shape []int, span float32) tensorfile.Tensor {
	n := 1
	for _, x := range shape {
		n *= x
	}
	data := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		v := 2*span*r.Float32() - span
		if round != nil {
			v = round(v)
		}
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	return tensorfile.Tensor{DType: tensorfile.DTypeF32, Shape: slices.Clone(shape), Data: data}
}

// Output is the first tensor a backend's Export writes: out.
func (Workload) Output(result.Config) string { return "out" }

// Outputs are out, and for backward and both the three input gradients.
func (Workload) Outputs(cfg result.Config) []string {
	if backwardPhase(cfg) {
		return []string{"out", "dq", "dk", "dv"}
	}
	return []string{"out"}
}

// Reference is out alone (the Workload interface's single output).
func (w Workload) Reference(cfg result.Config, fx workload.Fixtures) (tensorfile.Tensor, error) {
	fwd := cfg.Clone()
	fwd.Phase = workload.PhaseForward // out needs no dout
	all, err := w.References(fwd, fx)
	if err != nil {
		return tensorfile.Tensor{}, err
	}
	return all["out"], nil
}

// References computes every tensor of Outputs in float64 from the fixtures,
// as F64 tensors in the spec's shapes.
func (Workload) References(cfg result.Config, fx workload.Fixtures) (map[string]tensorfile.Tensor, error) {
	s := ShapeOf(cfg)
	names := []string{"q", "k", "v"}
	shapes := [][]int{s.QShape(), s.KShape(), s.KShape()}
	bwd := backwardPhase(cfg)
	if bwd {
		names, shapes = append(names, "dout"), append(shapes, s.QShape())
	}
	in := map[string][]float64{}
	for i, name := range names {
		t, ok := fx.Inputs[name]
		if !ok {
			return nil, fmt.Errorf("attention reference: fixtures have no input %q", name)
		}
		if !slices.Equal(t.Shape, shapes[i]) {
			return nil, fmt.Errorf("attention reference: input %q has shape %v, the configuration needs %v", name, t.Shape, shapes[i])
		}
		v, err := t.Float64s()
		if err != nil {
			return nil, fmt.Errorf("attention reference: input %q: %w", name, err)
		}
		in[name] = v
	}
	g := compute(s, in["q"], in["k"], in["v"], in["dout"])
	out := map[string]tensorfile.Tensor{"out": tensorfile.F64(s.QShape(), g.out)}
	if bwd {
		out["dq"] = tensorfile.F64(s.QShape(), g.dq)
		out["dk"] = tensorfile.F64(s.KShape(), g.dk)
		out["dv"] = tensorfile.F64(s.KShape(), g.dv)
	}
	return out, nil
}

// Tolerance is the largest relative L2 error accepted for every compared
// tensor:
//
//	base(dtype, phase) · clamp(sqrt(max(seq_len, kv_len)/256), 1, 5)
//
// base is the dtype's forward bound for out alone, its looser backward bound
// when the gradients are compared too. Rounding to the dtype is a fixed
// relative error, hence the floor; float32 accumulation over the longer of
// the two lengths (p·v sums kv_len terms, dk and dv sum seq_len) grows like
// its square root, hence the growth, capped at 5× (length 6400) so a wrong
// kernel cannot pass at long sequences. docs/workloads/attention.md gives
// the measured errors.
func (Workload) Tolerance(cfg result.Config) float64 {
	d, err := lookupDtype(cfg.Dtype())
	if err != nil {
		return 0 // nothing passes an unknown dtype
	}
	base := d.tolForward
	if backwardPhase(cfg) {
		base = d.tolBackward
	}
	s := ShapeOf(cfg)
	return base * min(max(math.Sqrt(float64(max(s.SeqLen, s.KVLen))/256), 1), 5)
}

// grads are the reference tensors, flat in row-major order; the gradients
// are nil when no dout was given.
type grads struct{ out, dq, dk, dv []float64 }

// compute is attention and, with dout, its gradients, in float64. Work is
// split by (batch, kv head): the g query heads of a group write only their
// own rows of out and dq and add only into their kv head's dk and dv, so
// workers never share an element, and each element is summed in one fixed
// order whatever the scheduling.
func compute(s Shape, q, k, v, dout []float64) grads {
	qn, kn := s.Batch*s.Heads*s.SeqLen*s.HeadDim, s.Batch*s.KVHeads*s.KVLen*s.HeadDim
	g := grads{out: make([]float64, qn)}
	if dout != nil {
		g.dq, g.dk, g.dv = make([]float64, qn), make([]float64, kn), make([]float64, kn)
	}
	workload.Parallel(s.Batch*s.KVHeads, func(job int) {
		b, kh := job/s.KVHeads, job%s.KVHeads
		for h := kh * s.Group(); h < (kh+1)*s.Group(); h++ {
			head(s, b, h, q, k, v, dout, g)
		}
	})
	return g
}

// head computes one query head's rows: p = softmax(scale·q·kᵀ, masked),
// out = p·v, then (with dout) ds = p·(dout·vᵀ − rowsum(dout·out)),
// dq = scale·ds·k, dk += scale·dsᵀ·q, dv += pᵀ·dout.
func head(s Shape, b, h int, q, k, v, dout []float64, g grads) {
	d, sq, sk := s.HeadDim, s.SeqLen, s.KVLen
	scale := 1 / math.Sqrt(float64(d))
	qo := ((b*s.Heads + h) * sq) * d // offset of this head's q, out, dout, dq
	ko := ((b*s.KVHeads + h/s.Group()) * sk) * d
	p := make([]float64, sq*sk)
	for i := 0; i < sq; i++ {
		row := p[i*sk : (i+1)*sk]
		last := sk - 1
		if s.Causal {
			last = min(i+sk-sq, sk-1) // bottom-right alignment; Check makes it j <= i
		}
		mx := math.Inf(-1)
		for j := 0; j <= last; j++ {
			row[j] = scale * dot(q[qo+i*d:qo+(i+1)*d], k[ko+j*d:ko+(j+1)*d])
			mx = max(mx, row[j])
		}
		var sum float64
		for j := 0; j <= last; j++ {
			row[j] = math.Exp(row[j] - mx)
			sum += row[j]
		}
		for j := range row {
			if j > last {
				row[j] = 0
				continue
			}
			row[j] /= sum
		}
		o := g.out[qo+i*d : qo+(i+1)*d]
		for j := 0; j <= last; j++ {
			axpy(o, row[j], v[ko+j*d:ko+(j+1)*d])
		}
	}
	if dout == nil {
		return
	}
	for i := 0; i < sq; i++ {
		do := dout[qo+i*d : qo+(i+1)*d]
		di := dot(do, g.out[qo+i*d:qo+(i+1)*d])
		dq := g.dq[qo+i*d : qo+(i+1)*d]
		for j := 0; j < sk; j++ {
			pij := p[i*sk+j]
			if pij == 0 {
				continue // masked (or underflowed): no contribution to any gradient
			}
			vj := v[ko+j*d : ko+(j+1)*d]
			ds := pij * (dot(do, vj) - di)
			axpy(dq, scale*ds, k[ko+j*d:ko+(j+1)*d])
			axpy(g.dk[ko+j*d:ko+(j+1)*d], scale*ds, q[qo+i*d:qo+(i+1)*d])
			axpy(g.dv[ko+j*d:ko+(j+1)*d], pij, do)
		}
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i, x := range a {
		s += float64(x * b[i]) // the conversion forbids an FMA: the same sum on every architecture
	}
	return s
}

// axpy adds a·x into y.
func axpy(y []float64, a float64, x []float64) {
	for i, xi := range x {
		y[i] += float64(a * xi)
	}
}
