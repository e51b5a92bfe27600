// Package reference is the TTT workload's reference model in pure Go
// (docs/workloads/ttt.md): the language model's forward pass, its inner
// loop and its hand-written training-step backward, generic over float32
// and float64, spread over every core with results that do not depend on
// goroutine scheduling. `xbench verify` grades every backend against it in
// float64, in-process (Workload.References); burnstyle-hip's CPU path runs
// the same code at the run's precision.
package reference

import (
	"math"

	"github.com/xbench/xbench/harness/numeric"
)

// Float is the element type of one model instance.
type Float = numeric.Float

// Spec constants (docs/workloads/ttt.md).
const (
	eps       = 1e-6
	ropeTheta = 10000.0
)

// The transcendental functions go through float64: exact enough for float32
// and one code path for both precisions.
func sqrt[T Float](x T) T { return T(math.Sqrt(float64(x))) }

func sigmoid[T Float](x T) T { return T(1 / (1 + math.Exp(-float64(x)))) }

func silu[T Float](x T) T { return x * sigmoid(x) }

// geluC is sqrt(2/pi), the tanh approximation's scale.
const geluC = 0.7978845608028654

// gelu is the tanh approximation 0.5 x (1 + tanh(c (x + 0.044715 x^3))).
func gelu[T Float](x T) T {
	v := float64(x)
	return T(0.5 * v * (1 + math.Tanh(geluC*(v+0.044715*v*v*v))))
}

// geluGrad is d gelu / dx of the tanh approximation.
func geluGrad[T Float](x T) T {
	v := float64(x)
	th := math.Tanh(geluC * (v + 0.044715*v*v*v))
	return T(0.5*(1+th) + 0.5*v*(1-th*th)*geluC*(1+3*0.044715*v*v))
}

// geluGrad2 is d² gelu / dx² of the tanh approximation:
// (1 - t²)(u' - x t u'² + x u”/2), t = tanh(u), u = c(x + 0.044715 x³).
func geluGrad2[T Float](x T) T {
	v := float64(x)
	th := math.Tanh(geluC * (v + 0.044715*v*v*v))
	du := geluC * (1 + 3*0.044715*v*v)
	ddu := 6 * 0.044715 * geluC * v
	return T((1 - th*th) * (du - v*th*du*du + 0.5*v*ddu))
}
