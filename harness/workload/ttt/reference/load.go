package reference

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/xbench/xbench/harness/numeric"
	"github.com/xbench/xbench/harness/tensorfile"
)

// load decodes tensor name from w into the model's precision after checking
// it exists and has exactly the given shape.
func load[T Float](w map[string]tensorfile.Tensor, name string, shape ...int) ([]T, error) {
	t, ok := w[name]
	if !ok {
		return nil, fmt.Errorf("load weights: missing tensor %q", name)
	}
	if !slices.Equal(t.Shape, shape) {
		return nil, fmt.Errorf("load weights: tensor %q has shape %v, want %v", name, t.Shape, shape)
	}
	var zero T
	if _, ok := any(zero).(float32); ok {
		v, err := t.Float32s()
		if err != nil {
			return nil, fmt.Errorf("load weights: tensor %q: %w", name, err)
		}
		if out, ok := any(v).([]T); ok {
			return out, nil
		}
		return convert[T](v), nil
	}
	v, err := t.Float64s()
	if err != nil {
		return nil, fmt.Errorf("load weights: tensor %q: %w", name, err)
	}
	if out, ok := any(v).([]T); ok {
		return out, nil
	}
	return convert[T](v), nil
}

// loadT loads a [rows, cols] matrix and returns it transposed to
// [cols, rows], the layout MatMulNT wants for a right operand.
func loadT[T Float](w map[string]tensorfile.Tensor, name string, rows, cols int) ([]T, error) {
	v, err := load[T](w, name, rows, cols)
	if err != nil {
		return nil, err
	}
	return numeric.Transpose(v, rows, cols), nil
}

// convert changes the element type of a slice.
func convert[T Float, S Float](v []S) []T {
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out
}

// bytesOf is the memory n elements of T take.
func bytesOf[T Float](n int) int64 {
	var z T
	return int64(n) * int64(unsafe.Sizeof(z))
}
