package kernels

import "testing"

// The host flush writes a buffer at least twice the last-level cache (and
// never less than minCPUFlushBytes), and every byte of it each time.
func TestCPUFlush(t *testing.T) {
	cpuFlush()
	if cpuFlushBytes() < max(2*llcBytes(), minCPUFlushBytes) {
		t.Errorf("flush buffer %d bytes, want at least twice the LLC (%d) and %d", cpuFlushBytes(), llcBytes(), minCPUFlushBytes)
	}
	first, last := cpuFlushBuf[0], cpuFlushBuf[len(cpuFlushBuf)-1]
	cpuFlush()
	if cpuFlushBuf[0] != first+1 || cpuFlushBuf[len(cpuFlushBuf)-1] != last+1 {
		t.Error("a flush left part of the buffer unwritten")
	}
}
