package bench

import (
	"strings"

	"github.com/xbench/xbench/harness/result"
)

// oomMarkers are how frameworks word running out of memory, lower case. A
// backend that catches its own OOM reports status oom; one that lets the
// error escape (an error reply, a crash with a traceback) is caught here, so
// every framework's OOM lands in the same status and stops the larger
// cells. The Python contract's OOM_MARKERS (plugins/_python/xbench_py/
// types.py) reads this list from the generated facts (OOMMarkers,
// harness/facts), so a Python backend and the harness give one error one
// status.
var oomMarkers = []string{
	"out of memory",             // CUDA/HIP runtime, PyTorch, JAX ("RESOURCE_EXHAUSTED: Out of memory"), Linux
	"outofmemoryerror",          // torch.cuda.OutOfMemoryError, torch.OutOfMemoryError
	"resource_exhausted",        // XLA / JAX / TensorFlow
	"cuda_error_out_of_memory",  // CUDA driver API
	"cudaerrormemoryallocation", // CUDA runtime API
	"hiperroroutofmemory",       // HIP
	"cublas_status_alloc_failed",
	"miopenstatusallocfailed",
	"failed to allocate memory",
	"std::bad_alloc",
	"memoryerror",            // Python's own, and NumPy's _ArrayMemoryError
	"can't allocate memory",  // PyTorch's CPU allocator (DefaultCPUAllocator)
	"cannot allocate memory", // ENOMEM in the C library's words
	"unable to allocate",     // NumPy ("Unable to allocate 8.00 EiB for an array with shape ...")
}

// ClassOutsideClock names the failure of a cell whose samples read far
// below the harness's own clock (outside.go): its message starts with it,
// as a gate's refusal starts with its class, and its status is failed,
// which Classify leaves alone unless the output shows running out of
// memory.
const ClassOutsideClock = "clock disagrees with the harness's outside clock"

// OOMMarkers is a copy of the list, for the generated facts.
func OOMMarkers() []string { return append([]string(nil), oomMarkers...) }

// IsOOM reports whether text reads like an out-of-memory error.
func IsOOM(text string) bool {
	t := strings.ToLower(text)
	for _, m := range oomMarkers {
		if strings.Contains(t, m) {
			return true
		}
	}
	return false
}

// Classify turns a failed result whose message or output shows an
// out-of-memory error into status oom. Other statuses are left alone: a
// timeout stays a timeout even if the backend complained about memory.
func Classify(r result.Result) result.Result {
	if r.Status == result.StatusFailed && (IsOOM(r.Message) || IsOOM(r.Tail)) {
		r.Status = result.StatusOOM
		if !IsOOM(r.Message) {
			r.Message += " (its output shows an out-of-memory error)"
		}
	}
	return r
}
