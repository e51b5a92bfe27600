package gpu

import (
	"os"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cupti"
)

// The samples of the Sampler (timing.go) are the span of the call's CUPTI activity
// records (first kernel, copy or memset start to last end, on the GPU's own
// timestamps) where libcupti loads next to a real CUDA driver: events around
// a call add their own cost (a large share of a short call's time,
// results/h100-clock/README.md), which the records do not hold. The
// events stay recorded and are the samples where CUPTI is absent.
// XBENCH_BURNSTYLE_CUPTI=0 turns the records off; under the emulator
// (XBENCH_LIBCUDA set) there is no CUPTI to read.

// cuptiSpan is the first word of a Timing whose samples are record spans;
// the Python backends' clock has the same name (xbench_devclock.CUPTI_SPAN).
const cuptiSpan = "cupti-kernel-span"

// openTracer starts CUPTI's records for this process, or returns nil and
// why not.
func openTracer() (*cupti.Tracer, string) {
	if os.Getenv("XBENCH_BURNSTYLE_CUPTI") == "0" {
		return nil, "XBENCH_BURNSTYLE_CUPTI=0"
	}
	if os.Getenv("XBENCH_LIBCUDA") != "" {
		return nil, "XBENCH_LIBCUDA names another driver (the emulator): no CUPTI"
	}
	lib, path, err := specCUPTI.open()
	if err != nil {
		return nil, err.Error()
	}
	t, err := cupti.Open(lib, path)
	if err != nil {
		return nil, err.Error()
	}
	if err := t.Start(); err != nil {
		return nil, err.Error()
	}
	return t, ""
}

// spanOf is the sample of the call just synchronized: the span of the
// records drained since the last drain, or ok false when there were none
// (the events' sample stands).
func (r *Runtime) spanOf() (ms float64, ok bool, err error) {
	recs, err := r.Tracer.Drain()
	r.LastRecords = recs
	if err != nil || len(recs) == 0 {
		return 0, false, err
	}
	return cupti.Span(recs), true, nil
}

// ClockWord is the start of a workload's Timing: what the samples are.
func ClockWord(held, traced bool, tracerPath string) string {
	if traced {
		how := "first kernel/memcpy/memset start to last end of the call's CUPTI activity records (GPU timestamps; " + tracerPath + ")"
		if held {
			how += ", the stream held until the call is queued"
		}
		return cuptiSpan + ": " + how
	}
	if held {
		return "device events, the stream held until the call is queued (host launch not in the sample)"
	}
	return "device events around each launch (host launch in the sample)"
}

// tracerPath names the libcupti the records come from ("" without one).
func (r *Runtime) tracerPath() string {
	if r.Tracer == nil {
		return ""
	}
	return r.Tracer.Path()
}

// Clock is the start of the Timing of the samples TimedLaunches took last.
func (r *Runtime) Clock() string { return ClockWord(r.LastHeld, r.LastTraced, r.tracerPath()) }

// Clock is the start of the Timing of this sampler's samples.
func (s *Sampler) Clock() string { return ClockWord(s.Held(), s.traced, s.r.tracerPath()) }
