package bench

import (
	"testing"

	"github.com/xbench/xbench/harness/result"
)

// Every framework's words for running out of memory are oom; other
// failures, and statuses other than failed, are left alone.
func TestClassify(t *testing.T) {
	tests := []struct {
		status  result.Status
		message string
		tail    string
		want    result.Status
	}{
		{result.StatusFailed, "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB", "", result.StatusOOM},
		{result.StatusFailed, "RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate memory: you tried to allocate 6597069766656 bytes. Error code 12 (Cannot allocate memory)", "", result.StatusOOM},
		{result.StatusFailed, "_ArrayMemoryError: Unable to allocate 4.00 EiB for an array with shape (4611686018427387904,) and data type uint8", "", result.StatusOOM},
		{result.StatusFailed, "MemoryError", "", result.StatusOOM},
		{result.StatusFailed, "error reading from server: EOF", "fatal error: out of memory\n\ngoroutine 1 [running]:", result.StatusOOM},
		{result.StatusFailed, "RuntimeError: shape mismatch", "", result.StatusFailed},
		{result.StatusTimeout, "no result within --timeout 1s", "CUDA out of memory", result.StatusTimeout},
	}
	for _, tt := range tests {
		got := Classify(result.Result{Status: tt.status, Message: tt.message, Tail: tt.tail})
		if got.Status != tt.want {
			t.Errorf("%s %q (tail %q): %s, want %s", tt.status, tt.message, tt.tail, got.Status, tt.want)
		}
	}
}
