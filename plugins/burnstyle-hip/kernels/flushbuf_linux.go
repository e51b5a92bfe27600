package kernels

import (
	"syscall"
	"unsafe"
)

// flushWords is the cold-cache flush's buffer of n/8 words, every page
// mapped up front (MAP_POPULATE): faulted in page by page on the first
// write instead, it took up to seconds on the 2-core CI machine
// (docs/results/ci-time.md). It lives as long as the process.
func flushWords(n int) []uint64 {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_POPULATE)
	if err != nil || len(b) < 8 {
		return make([]uint64, n/8)
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
}
