package gpu

// Dtype is how one workload dtype is stored and computed by the GPU paths:
// its element size, its code in each library and in the native kernels.
// dtypes is the one table of them that gemm's library paths and the
// attention kernels read (gemmTypeOf, rocmTypeOf, attnDtypeCode).
type Dtype struct {
	Bytes          int
	Cuda           int32 // cudaDataType of stored values (float32 storage for tf32)
	CublasCompute  int32 // cublasComputeType_t
	CublasMath     int32 // cublasMath_t set on the handle
	Hip            int32 // hipDataType
	HipblasCompute int32 // hipblasComputeType_t
	Rocblas        int32 // rocblas_datatype; -1: rocBLAS is not asked for it
	Kernel         int   // the native kernels' XA_DT; -1: they do not take it
}

var dtypes = map[string]Dtype{
	"float32": {Bytes: 4, Cuda: CudaR32F, CublasCompute: CublasCompute32F, CublasMath: CublasPedanticMath,
		Hip: HipR32F, HipblasCompute: HipblasCompute32F, Rocblas: RocblasF32, Kernel: 0},
	// tf32: xf32 on CDNA3; rocBLAS has it only as a handle's math mode, not bound.
	"tf32": {Bytes: 4, Cuda: CudaR32F, CublasCompute: CublasCompute32FFastTF32, CublasMath: CublasDefaultMath,
		Hip: HipR32F, HipblasCompute: HipblasCompute32FFastTF32, Rocblas: -1, Kernel: -1},
	"bfloat16": {Bytes: 2, Cuda: CudaR16BF, CublasCompute: CublasCompute32F, CublasMath: CublasFloat32Sums,
		Hip: HipR16BF, HipblasCompute: HipblasCompute32F, Rocblas: RocblasBF16, Kernel: 1},
	"float16": {Bytes: 2, Cuda: CudaR16F, CublasCompute: CublasCompute32F, CublasMath: CublasFloat32Sums,
		Hip: HipR16F, HipblasCompute: HipblasCompute32F, Rocblas: RocblasF16, Kernel: 2},
}

// DtypeOf is name's entry; ok is false for a dtype the GPU paths lack.
func DtypeOf(name string) (d Dtype, ok bool) {
	d, ok = dtypes[name]
	return d, ok
}
