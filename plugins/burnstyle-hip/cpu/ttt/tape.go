// Package ttt is burnstyle-hip's own CPU implementation of the TTT
// workload, written from the spec (docs/workloads/ttt.md), and its engine
// (engine.go): the language model's forward pass, its inner loop alone
// (--inner-only) and the training step. The training step's gradients come from reverse-mode
// differentiation over a tape of small tensor operations, each with its own
// derivative, rather than a hand-derived backward of the whole model; the
// harness grades both the logits and the gradients against its float64
// reference model, which this package does not use.
package ttt

import "github.com/xbench/xbench/harness/numeric"

// Float is the element type of one model instance.
type Float = numeric.Float

// Tensor is a batch of row-major matrices, shape [N, R, C]. A vector is a
// one-row or one-column matrix. G, the gradient of the loss with respect to
// V, exists only for tensors a recorded result depends on, once Backward
// reaches them.
type Tensor[T Float] struct {
	N, R, C int
	V, G    []T
	grad    bool   // the loss depends on it through recorded operations
	back    func() // adds this tensor's G into its operands' G
}

// Len is the number of elements.
func (x *Tensor[T]) Len() int { return x.N * x.R * x.C }

// gradBuf returns x's gradient buffer, zeroed on first use.
func (x *Tensor[T]) gradBuf() []T {
	if x.G == nil {
		x.G = make([]T, x.Len())
	}
	return x.G
}

// Tape creates tensors and, when it records, remembers every result that
// depends on a parameter so Backward can run the operations in reverse. A
// tape that does not record (a forward or inner-only call) keeps nothing,
// so each intermediate is garbage once the next operation has read it.
type Tape[T Float] struct {
	record bool
	nodes  []*Tensor[T]
	bytes  int64 // every tensor this tape created: what a step allocates
}

// NewTape returns a tape; record is true for a training step.
func NewTape[T Float](record bool) *Tape[T] { return &Tape[T]{record: record} }

// Param wraps values the loss is differentiated with respect to (when the
// tape records).
func (tp *Tape[T]) Param(n, r, c int, v []T) *Tensor[T] {
	if len(v) != n*r*c {
		panic("Param: values do not fill the shape")
	}
	return &Tensor[T]{N: n, R: r, C: c, V: v, grad: tp.record}
}

// Const wraps values with no gradient (inputs, masks, tables).
func (tp *Tape[T]) Const(n, r, c int, v []T) *Tensor[T] {
	if len(v) != n*r*c {
		panic("Const: values do not fill the shape")
	}
	return &Tensor[T]{N: n, R: r, C: c, V: v}
}

// result allocates the output of an operation on operands; back is kept
// only when the tape records and an operand carries a gradient.
func (tp *Tape[T]) result(n, r, c int, operands ...*Tensor[T]) *Tensor[T] {
	out := &Tensor[T]{N: n, R: r, C: c, V: make([]T, n*r*c)}
	tp.bytes += int64(n*r*c) * sizeOf[T]()
	if !tp.record {
		return out
	}
	for _, o := range operands {
		if o.grad {
			out.grad = true
			tp.nodes = append(tp.nodes, out)
			return out
		}
	}
	return out
}

// Backward seeds the scalar loss's gradient with 1 and runs every recorded
// operation's derivative in reverse order of creation.
func (tp *Tape[T]) Backward(loss *Tensor[T]) {
	if loss.Len() != 1 {
		panic("Backward: the loss is not a scalar")
	}
	loss.gradBuf()[0] = 1
	for i := len(tp.nodes) - 1; i >= 0; i-- {
		n := tp.nodes[i]
		if n.G != nil && n.back != nil {
			n.back()
		}
		tp.bytes += int64(len(n.G)) * sizeOf[T]()
	}
}

// Bytes is what the tape's tensors (and, after Backward, their gradients)
// take: an upper bound of what one step holds at once.
func (tp *Tape[T]) Bytes() int64 { return tp.bytes }

func sizeOf[T Float]() int64 {
	var z T
	if _, ok := any(z).(float64); ok {
		return 8
	}
	return 4
}
