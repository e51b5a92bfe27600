package gpu

import (
	"math"
	"runtime"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
)

func TestEncode(t *testing.T) {
	v := []float32{0, 1, -2.5, 3.14159, 1e-3, 65504, float32(math.Inf(-1))}
	for _, dt := range []int32{CudaR32F, CudaR16BF, CudaR16F} {
		got := Decode(Encode(v, dt), dt)
		for i, x := range v {
			want := x
			switch dt {
			case CudaR16BF:
				want = cpu.RoundBF16(x)
			case CudaR16F:
				want = cpu.RoundF16(x)
			}
			if got[i] != want {
				t.Errorf("type %d: %g -> %g, want %g", dt, x, got[i], want)
			}
		}
	}
	for _, dt := range []int32{CudaR32F, CudaR16BF, CudaR16F} {
		var b [4]byte
		w := NaNWord(dt)
		b[0], b[1], b[2], b[3] = byte(w), byte(w>>8), byte(w>>16), byte(w>>24)
		for _, x := range Decode(b[:], dt) {
			if !math.IsNaN(float64(x)) {
				t.Errorf("type %d: poison word %#x decodes to %g", dt, w, x)
			}
		}
	}
}

func TestRandomInputs(t *testing.T) {
	n := 2*gemmChunk + 17
	a := RandomInputs(n, 42, 1)
	old := runtime.GOMAXPROCS(1)
	b := RandomInputs(n, 42, 1)
	runtime.GOMAXPROCS(old)
	c := RandomInputs(n, 42, 2)
	same := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("inputs depend on GOMAXPROCS at %d", i)
		}
		if a[i] < -1 || a[i] >= 1 {
			t.Fatalf("a[%d] = %g outside [-1, 1)", i, a[i])
		}
		if a[i] == c[i] {
			same++
		}
	}
	if same > n/1000 {
		t.Errorf("A and B streams agree in %d of %d places", same, n)
	}
}
