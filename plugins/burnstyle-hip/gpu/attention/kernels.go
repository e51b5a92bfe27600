package attention

import "embed"

// kernelFS holds the attention kernels' sources (gpu.Program puts the
// runtime's prelude before them).
//
//go:embed kernels/*.cu kernels/*.cuh
var kernelFS embed.FS

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
