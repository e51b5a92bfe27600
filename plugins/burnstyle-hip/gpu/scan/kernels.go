package scan

import "embed"

// kernelFS holds the scan's kernel source (gpu.Program puts the runtime's
// prelude before it).
//
//go:embed kernels/scan.cu
var kernelFS embed.FS

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
