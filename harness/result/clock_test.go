package result

import "testing"

func TestFallbackClock(t *testing.T) {
	for _, tc := range []struct {
		kind, timing, want string
	}{
		{"cuda", "cupti-kernel-span: first kernel/memcpy/memset start to last end ...", ""},
		{"cuda", "cupti-kernel-busy: the union of ...", ""},
		{"cuda", "cuda-events: torch.cuda events around the call (CUPTI unavailable (No module named 'cupti'))", "cuda-events"},
		{"cuda", "host-clock-block: a host clock (CUPTI unavailable (libcupti.so: cannot open))", "host-clock-block"},
		{"rocm", "host-clock-block: a host clock (ROCm: no CUPTI (rocprofiler not wired))", "host-clock-block"},
		{"cuda", "device events, the stream held until the call is queued", "device events, the stream held until the call is queued"},
		// launch-bound: the framework's clock is the chosen one, not a fallback
		{"cuda", "cuda-events: events (launch-bound call, CUPTI tracing off: 4103 kernels/copies ...)", ""},
		{"cpu", "host-clock: perf_counter around the call", ""},
		{"cuda", "", ""},
	} {
		r := Result{Device: Device{Kind: tc.kind}, Env: Env{Timing: tc.timing}}
		if got := r.FallbackClock(); got != tc.want {
			t.Errorf("%s %q: FallbackClock %q, want %q", tc.kind, tc.timing, got, tc.want)
		}
	}
}
