package cpu

// Scaled dot-product attention forward (docs/workloads/attention.md) in pure
// Go: the CPU path of the "attention" workload and the GPU tests' reference.
//
// Layouts are BHSD and row-major: q and out [batch, heads, seq, dim], k and v
// [batch, kvHeads, kvLen, dim]; query head h reads kv head h / (heads /
// kvHeads). With causal set, key j is visible to query i when
// j <= i + (kvLen - seqLen) (bottom-right, as FlashAttention-2); a row that
// sees no key (possible only when kvLen < seqLen) comes out as zeros, the
// FlashAttention convention.
//
// Work is split over GOMAXPROCS goroutines by (batch, head, block of
// attnRows query rows). Each row is computed in full by one goroutine in a
// fixed order (scores, max, exponentials and their sum, then the weighted
// sum of v rows), so results are bitwise reproducible. Arithmetic is float32
// with exp through float64, as the rest of the package.

import (
	"fmt"
	"math"

	"github.com/xbench/xbench/harness/numeric"
)

// AttentionShape is one attention problem's geometry.
type AttentionShape struct {
	Batch, Heads, KVHeads, SeqLen, KVLen, HeadDim int
	Causal                                        bool
}

// Check states what the kernels assume; kv_heads and kv_len must already be
// resolved (the workload's 0 means "equal to heads / seq_len").
func (s AttentionShape) Check() error {
	for _, d := range []struct {
		name string
		v    int
	}{{"batch", s.Batch}, {"heads", s.Heads}, {"kv_heads", s.KVHeads}, {"seq_len", s.SeqLen}, {"kv_len", s.KVLen}, {"head_dim", s.HeadDim}} {
		if d.v < 1 || d.v > math.MaxInt32 {
			return fmt.Errorf("attention %s: %s=%d out of range [1, 2^31)", s, d.name, d.v)
		}
	}
	if s.Heads%s.KVHeads != 0 {
		return fmt.Errorf("attention %s: kv_heads %d does not divide heads %d", s, s.KVHeads, s.Heads)
	}
	return nil
}

func (s AttentionShape) String() string {
	return fmt.Sprintf("batch=%d heads=%d kv_heads=%d seq_len=%d kv_len=%d head_dim=%d causal=%v",
		s.Batch, s.Heads, s.KVHeads, s.SeqLen, s.KVLen, s.HeadDim, s.Causal)
}

// QLen and KLen are the element counts of q (and out) and of k (and v).
func (s AttentionShape) QLen() int { return s.Batch * s.Heads * s.SeqLen * s.HeadDim }
func (s AttentionShape) KLen() int { return s.Batch * s.KVHeads * s.KVLen * s.HeadDim }

// Visible is the number of keys query row i sees: keys [0, Visible(i)).
func (s AttentionShape) Visible(i int) int {
	if !s.Causal {
		return s.KVLen
	}
	return max(0, min(s.KVLen, i+s.KVLen-s.SeqLen+1))
}

// attnRows is the query rows one parallel item covers: enough to amortise
// scheduling, few enough that short sequences still spread over the cores.
const attnRows = 16

// Attention is the float32 forward; it returns a new out. Slices of the
// wrong length are an error naming the shape.
func Attention(s AttentionShape, q, k, v []float32) ([]float32, error) {
	return attentionForward(s, q, k, v, nil)
}

// AttentionLSE is Attention that also returns each query row's
// log-sum-exp of its scaled scores ([batch, heads, seq_len]), the saved
// state of AttentionBackward.
func AttentionLSE(s AttentionShape, q, k, v []float32) (out, lse []float32, err error) {
	lse = make([]float32, s.Batch*s.Heads*s.SeqLen)
	out, err = attentionForward(s, q, k, v, lse)
	return out, lse, err
}

// attentionForward fills lse too when it is not nil.
func attentionForward(s AttentionShape, q, k, v, lse []float32) ([]float32, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	if len(q) != s.QLen() || len(k) != s.KLen() || len(v) != s.KLen() {
		return nil, fmt.Errorf("attention %s: q, k, v have %d, %d, %d elements; want %d, %d, %d",
			s, len(q), len(k), len(v), s.QLen(), s.KLen(), s.KLen())
	}
	S, KV, D, g := s.SeqLen, s.KVLen, s.HeadDim, s.Heads/s.KVHeads
	out := make([]float32, len(q))
	blocks := (S + attnRows - 1) / attnRows
	scratch := make([][]float32, numeric.NumWorkers())
	scale := float32(1 / math.Sqrt(float64(D)))
	numeric.ParallelFor(s.Batch*s.Heads*blocks, func(w, t int) {
		bh, i0 := t/blocks, (t%blocks)*attnRows
		b, h := bh/s.Heads, bh%s.Heads
		kvOff := (b*s.KVHeads + h/g) * KV * D // GQA: an index, never a copy
		kh, vh := k[kvOff:kvOff+KV*D], v[kvOff:kvOff+KV*D]
		if scratch[w] == nil {
			scratch[w] = make([]float32, KV)
		}
		p := scratch[w]
		for i := i0; i < min(i0+attnRows, S); i++ {
			row := (bh*S + i) * D
			l := attentionRow(out[row:row+D], q[row:row+D], kh, vh, p[:s.Visible(i)], D, scale)
			if lse != nil {
				lse[bh*S+i] = l
			}
		}
	})
	return out, nil
}

// attentionRow writes one output row from the keys and values it sees
// (len(p) of them; p is scratch for the probabilities) and returns the row's
// log-sum-exp of the scaled scores, the state the backward recomputes p
// from (+Inf for a row that sees no key, so every p comes out 0).
func attentionRow(o, qi, k, v, p []float32, D int, scale float32) float32 {
	clear(o)
	if len(p) == 0 {
		return float32(math.Inf(1)) // no visible key: zeros
	}
	m := float32(math.Inf(-1))
	for j := range p {
		kj := k[j*D : j*D+D]
		var acc float32
		for t, x := range qi {
			acc += x * kj[t]
		}
		p[j] = acc * scale
		m = max(m, p[j])
	}
	var l float32
	for j, x := range p {
		p[j] = float32(math.Exp(float64(x - m)))
		l += p[j]
	}
	for j, pj := range p {
		vj := v[j*D : j*D+D]
		for t := range o {
			o[t] += pj * vj[t]
		}
	}
	inv := 1 / l
	for t := range o {
		o[t] *= inv
	}
	return m + float32(math.Log(float64(l)))
}

// AttentionDtype is Attention at a workload dtype: float32 as is; bfloat16
// and float16 round q, k and v to the type (nearest even), compute in
// float32 and round out to the type, as a GPU with 16-bit tensors, float32
// softmax and float32 accumulation does (the probabilities stay float32
// here). The inputs are not modified.
func AttentionDtype(dtype string, s AttentionShape, q, k, v []float32) ([]float32, error) {
	round, err := Rounding(dtype)
	if err != nil {
		return nil, fmt.Errorf("attention %s: %w", s, err)
	}
	out, err := Attention(s, Rounded(round, q), Rounded(round, k), Rounded(round, v))
	if err != nil || round == nil {
		return out, err
	}
	for i, x := range out {
		out[i] = round(x)
	}
	return out, nil
}
