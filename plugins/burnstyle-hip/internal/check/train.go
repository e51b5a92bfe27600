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

// InnerTrainInputs are an inner-only training step's weights and inputs:
// perturbed inner parameters, xq, xk, xv, gate as an inner-only run's, and
// dout [B, nh, L, f] ~ N(0, 1), the gradient the loss sum(out * dout) gives
// the output.
func InnerTrainInputs(cfg ttt.Config, seed int64) (s ttt.Size, w, in map[string]tensorfile.Tensor, err error) {
	if s, err = ttt.LookupSize(cfg.ModelSize); err != nil {
		return
	}
	w, in = InnerTrainInputsOf(cfg, s, seed)
	return
}

// InnerTrainInputsOf is InnerTrainInputs for an inner model of dimensions s.
func InnerTrainInputsOf(cfg ttt.Config, s ttt.Size, seed int64) (w, in map[string]tensorfile.Tensor) {
	c := cfg
	c.InnerOnly = true
	w, in = InputsOf(c, s, seed)
	xq, _ := in["xq"].Float32s()
	d := make([]float32, len(xq))
	state := uint64(seed)*0x9E3779B97F4A7C15 + 1
	for i := range d { // Box-Muller on a small xorshift: deterministic, no shared stream
		u1, u2 := uniform(&state), uniform(&state)
		d[i] = float32(math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2))
	}
	in["dout"] = tensorfile.F32(in["xq"].Shape, d)
	return
}

func uniform(s *uint64) float64 {
	*s ^= *s << 13
	*s ^= *s >> 7
	*s ^= *s << 17
	return (float64(*s>>11) + 0.5) / (1 << 53)
}

// InnerGradFD is the float64 gradient of sum(out * dout) with respect to
// every inner parameter and the inputs xq, xk, xv, gate, by central
// differences of the CPU inner model (reference.Inner.Run in float64). Each
// (sequence, head) is independent, so one pair of runs perturbs the same
// position of every sequence and head at once and reads each one's own
// loss: the cost is that of one sequence and head.
// With sample > 0, at most that many evenly spaced positions of each group
// are differentiated and the others are NaN (CompareGrads skips them), so
// f = 64 stays cheap.
func InnerGradFD(cfg ttt.Config, s ttt.Size, w, in map[string]tensorfile.Tensor, sample int) (map[string][]float64, error) {
	B, nh, L, f, K := cfg.Batch, s.Heads, cfg.SeqLen, s.HeadDim, cfg.MiniBatch
	mlp := cfg.TTTType == "mlp"
	f64 := func(t tensorfile.Tensor) []float64 { v, _ := t.Float64s(); return v }
	x := map[string][]float64{}
	for _, n := range []string{"xq", "xk", "xv", "gate", "dout"} {
		t, ok := in[n]
		if !ok {
			return nil, fmt.Errorf("inner gradient: input %q missing", n)
		}
		x[n] = f64(t)
	}
	params := map[string][]float64{}
	shapes := map[string][]int{}
	for _, p := range ttt.InnerParams(s, cfg.TTTType, K) {
		t, ok := w[p.Name]
		if !ok {
			return nil, fmt.Errorf("inner gradient: weight %q missing", p.Name)
		}
		params[p.Name], shapes[p.Name] = f64(t), t.Shape
	}
	out := make([]float64, len(x["xq"]))
	items := B * nh
	// itemLoss runs the model and returns each (sequence, head)'s loss.
	itemLoss := func() ([]float64, error) {
		wt := map[string]tensorfile.Tensor{}
		for n, v := range params {
			wt[n] = tensorfile.F64(shapes[n], v)
		}
		p, err := reference.NewInner[float64](wt, "layers.0.ttt.", nh, f, K, mlp, ttt.BaseLR(cfg.TTTType))
		if err != nil {
			return nil, err
		}
		p.Run(out, x["xq"], x["xk"], x["xv"], x["gate"], B, L)
		per := make([]float64, items)
		n := L * f
		for it := range per {
			for e := it * n; e < (it+1)*n; e++ {
				per[it] += out[e] * x["dout"][e]
			}
		}
		return per, nil
	}
	// diff differentiates v (groups of size elements; group g collects the
	// losses of the items whose index maps to it through group).
	diff := func(v []float64, size int, group func(item int) int) ([]float64, error) {
		ng := len(v) / size
		g := make([]float64, len(v))
		step := 1
		if sample > 0 && size > sample {
			step = (size + sample - 1) / sample
			for i := range g {
				g[i] = math.NaN()
			}
		}
		for p := (size - 1) % step; p < size; p += step {
			h := 1e-5
			var lo, hi []float64
			for _, sgn := range []float64{1, -1} {
				for gi := 0; gi < ng; gi++ {
					v[gi*size+p] += sgn * h
				}
				per, err := itemLoss()
				for gi := 0; gi < ng; gi++ {
					v[gi*size+p] -= sgn * h
				}
				if err != nil {
					return nil, err
				}
				sum := make([]float64, ng)
				for it, l := range per {
					sum[group(it)] += l
				}
				if sgn > 0 {
					hi = sum
				} else {
					lo = sum
				}
			}
			for gi := 0; gi < ng; gi++ {
				g[gi*size+p] = (hi[gi] - lo[gi]) / (2 * h)
			}
		}
		return g, nil
	}
	ref := map[string][]float64{}
	var err error
	for _, n := range []string{"xq", "xk", "xv"} {
		if ref[n], err = diff(x[n], L*f, func(it int) int { return it }); err != nil {
			return nil, err
		}
	}
	if ref["gate"], err = diff(x["gate"], L, func(it int) int { return it }); err != nil {
		return nil, err
	}
	for n, v := range params {
		size, group := len(v)/nh, func(it int) int { return it % nh }
		if len(shapes[n]) == 1 { // tok_delta: shared by every head
			size, group = len(v), func(int) int { return 0 }
		}
		if ref[n], err = diff(v, size, group); err != nil {
			return nil, err
		}
	}
	return ref, nil
}

// GradOutcome is one gradient tensor against its reference.
type GradOutcome struct {
	Name          string
	RelL2, MaxAbs float64
	NaN           int
}

// CompareGrads grades every reference tensor by relative L2 error, in name
// order, over the elements the reference has (NaN: not computed); a tensor
// missing from got is an error.
func CompareGrads(got map[string]tensorfile.Tensor, ref map[string][]float64) ([]GradOutcome, error) {
	names := make([]string, 0, len(ref))
	for n := range ref {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []GradOutcome
	for _, n := range names {
		t, ok := got[n]
		if !ok {
			return nil, fmt.Errorf("gradient %q missing", n)
		}
		g, err := t.Float64s()
		if err != nil {
			return nil, fmt.Errorf("gradient %q: %w", n, err)
		}
		r := ref[n]
		if len(g) != len(r) {
			return nil, fmt.Errorf("gradient %q has %d elements, reference %d", n, len(g), len(r))
		}
		o := GradOutcome{Name: n}
		var num, den float64
		for i := range g {
			if math.IsNaN(r[i]) {
				continue
			}
			if math.IsNaN(g[i]) || math.IsInf(g[i], 0) {
				o.NaN++
				continue
			}
			d := g[i] - r[i]
			num += d * d
			den += r[i] * r[i]
			o.MaxAbs = math.Max(o.MaxAbs, math.Abs(d))
		}
		o.RelL2 = math.Sqrt(num / math.Max(den, 1e-300))
		out = append(out, o)
	}
	return out, nil
}

// RunTrain builds cfg's training-step model on d, runs one step and returns
// its gradients (and the model's description).
func RunTrain(d *gpu.Device, cfg ttt.Config, w, in map[string]tensorfile.Tensor, opt gputtt.Options) (map[string]tensorfile.Tensor, string, error) {
	m, err := gputtt.NewModelWith(d, cfg, w, opt)
	if err != nil {
		return nil, "", err
	}
	defer m.Close()
	if err := SetInputs(m, cfg, in); err != nil {
		return nil, "", err
	}
	if _, err := m.Run(); err != nil {
		return nil, "", err
	}
	g, err := m.Grads()
	return g, m.Describe(), err
}

// TrainRef is the CPU model's float64 training step: logits, the mean loss
// and every parameter's gradient by the spec's name.
type TrainRef struct {
	Logits []float64
	Loss   float64
	Grads  map[string][]float64
}

// TrainReference runs the CPU model's float64 training step (package
// reference, the one xbench verify grades backends against) on w and the tokens.
func TrainReference(cfg ttt.Config, s ttt.Size, w, in map[string]tensorfile.Tensor) (TrainRef, error) {
	m, err := reference.NewModel[float64](s, cfg.TTTType, cfg.Backbone, cfg.MiniBatch, w)
	if err != nil {
		return TrainRef{}, err
	}
	tok, err := in["tokens"].Int32s()
	if err != nil {
		return TrainRef{}, err
	}
	logits, loss, err := m.ForwardBackward(tok, cfg.Batch, cfg.SeqLen)
	if err != nil {
		return TrainRef{}, err
	}
	r := TrainRef{Logits: append([]float64(nil), logits...), Loss: loss, Grads: map[string][]float64{}}
	for n, g := range m.Grads() {
		r.Grads[n] = append([]float64(nil), g...)
	}
	return r, nil
}

// TrainOutcome is one training step against the reference: the logits, the
// loss and each parameter's gradient.
type TrainOutcome struct {
	Logits        GradOutcome
	Loss, RefLoss float64
	Grads         []GradOutcome
	Tol           float64
	Describe      string
}

// Worst is the largest relative L2 error over the logits and gradients,
// and its tensor's name.
func (o TrainOutcome) Worst() (string, float64) {
	name, worst := "logits", o.Logits.RelL2
	for _, g := range o.Grads {
		if g.RelL2 > worst || math.IsNaN(g.RelL2) {
			name, worst = g.Name, g.RelL2
		}
	}
	return name, worst
}

// Pass says whether every tensor is within Tol with nothing unwritten, and
// the loss within Tol relative.
func (o TrainOutcome) Pass() bool {
	if o.Logits.NaN > 0 || !(math.Abs(o.Loss-o.RefLoss) <= o.Tol*math.Abs(o.RefLoss)) {
		return false
	}
	for _, g := range append([]GradOutcome{o.Logits}, o.Grads...) {
		if g.NaN > 0 || !(g.RelL2 <= o.Tol) {
			return false
		}
	}
	return true
}

// VerifyTrain runs one training step of cfg on d (logits poisoned first)
// and grades it against ref; every parameter of the configuration must
// come back.
func VerifyTrain(d *gpu.Device, cfg ttt.Config, w, in map[string]tensorfile.Tensor, ref TrainRef, opt gputtt.Options) (TrainOutcome, error) {
	m, err := runPoisoned(d, cfg, w, in, opt)
	if err != nil {
		return TrainOutcome{}, err
	}
	defer m.Close()
	o := TrainOutcome{RefLoss: ref.Loss, Tol: ttt.Workload{}.Tolerance(cfg.Result()), Describe: m.Describe()}
	if o.Loss, err = m.Loss(); err != nil {
		return o, err
	}
	logits, shape, err := m.Output()
	if err != nil {
		return o, err
	}
	lg, err := CompareGrads(map[string]tensorfile.Tensor{"logits": tensorfile.F32(shape, logits)},
		map[string][]float64{"logits": ref.Logits})
	if err != nil {
		return o, err
	}
	o.Logits = lg[0]
	got, err := m.Grads()
	if err != nil {
		return o, err
	}
	s, err := SizeOf(cfg, opt)
	if err != nil {
		return o, err
	}
	want := map[string][]float64{}
	for _, p := range ttt.Params(s, cfg.TTTType, cfg.MiniBatch, cfg.Backbone) {
		g, ok := ref.Grads[p.Name]
		if !ok {
			return o, fmt.Errorf("reference has no gradient of %q", p.Name)
		}
		want[p.Name] = g
	}
	if len(got) != len(want) {
		return o, fmt.Errorf("the GPU returned %d gradients, the configuration has %d parameters", len(got), len(want))
	}
	o.Grads, err = CompareGrads(got, want)
	return o, err
}

// RoundedBF16 is w with every tensor rounded to bfloat16 (to nearest even,
// as the GPU path rounds parameters when it loads them): the point a
// bfloat16 run actually evaluates, so a reference there isolates the
// kernels' error from the weights' rounding (which alone moves small
// gradients such as lr_b's by ~5% at tiny).
func RoundedBF16(w map[string]tensorfile.Tensor) (map[string]tensorfile.Tensor, error) {
	out := make(map[string]tensorfile.Tensor, len(w))
	for n, t := range w {
		v, err := t.Float32s()
		if err != nil {
			return nil, fmt.Errorf("round %q to bfloat16: %w", n, err)
		}
		for i, x := range v {
			u := math.Float32bits(x)
			if u&0x7fffffff <= 0x7f800000 { // leave NaN alone
				u += 0x7fff + (u>>16)&1
			}
			v[i] = math.Float32frombits(u &^ 0xffff)
		}
		out[n] = tensorfile.F32(t.Shape, v)
	}
	return out, nil
}
