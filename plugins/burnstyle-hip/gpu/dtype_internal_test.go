package gpu

import "testing"

// The table's codes agree with one another: the element size with the
// CUDA and HIP storage types, rocBLAS's type with hipBLASLt's, and each
// kernel code is used once.
func TestDtypeTable(t *testing.T) {
	size := map[int32]int{CudaR32F: 4, CudaR16BF: 2, CudaR16F: 2}
	hipOf := map[int32]int32{CudaR32F: HipR32F, CudaR16BF: HipR16BF, CudaR16F: HipR16F}
	rocOf := map[int32]int32{HipR32F: RocblasF32, HipR16BF: RocblasBF16, HipR16F: RocblasF16}
	kernels := map[int]string{}
	for name, d := range dtypes {
		if size[d.Cuda] != d.Bytes || hipOf[d.Cuda] != d.Hip {
			t.Errorf("%s: %d bytes, cuda type %d, hip type %d disagree", name, d.Bytes, d.Cuda, d.Hip)
		}
		if d.Rocblas != -1 && rocOf[d.Hip] != d.Rocblas {
			t.Errorf("%s: rocBLAS type %d for hip type %d", name, d.Rocblas, d.Hip)
		}
		if d.Kernel >= 0 {
			if other, ok := kernels[d.Kernel]; ok {
				t.Errorf("%s and %s share kernel code %d", name, other, d.Kernel)
			}
			kernels[d.Kernel] = name
		}
	}
	if _, ok := DtypeOf("float8_e4m3"); ok {
		t.Error("float8_e4m3 has an entry, but no GPU path computes it")
	}
}
