//go:build !linux

package kernels

// flushWords is the cold-cache flush's buffer of n/8 words.
func flushWords(n int) []uint64 { return make([]uint64, n/8) }
