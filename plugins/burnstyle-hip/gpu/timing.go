package gpu

import (
	"context"
	"fmt"
)

// FlushBytes is what a cold-cache sample writes before it: more than the L2
// of any current GPU (H100 and H200 have 50 MiB).
const FlushBytes = 256 << 20

// Calls is how a timed run calls the device after its first (compile)
// call: Warmup untimed calls, then Repeats samples, each after an L2 flush
// of FlushBytes when ColdCache (--cold-cache). It is the one mode value the
// kernel workloads pass down.
type Calls struct {
	Warmup, Repeats int
	ColdCache       bool
}

// Check rejects counts no timing loop can run.
func (c Calls) Check(what string) error {
	if c.Warmup < 0 || c.Repeats < 1 {
		return fmt.Errorf("%s: warmup=%d repeats=%d (want warmup >= 0, repeats >= 1)", what, c.Warmup, c.Repeats)
	}
	return nil
}

// flushBytes is what the sampler writes before each sample.
func (c Calls) flushBytes() int64 {
	if c.ColdCache {
		return FlushBytes
	}
	return 0
}

// Note is what the result's timing line adds for c: the flush, when cold.
func (c Calls) Note() string {
	if !c.ColdCache {
		return ""
	}
	return fmt.Sprintf("; before each timed call a %d MiB memset and a synchronize, outside the events (cold L2)", FlushBytes>>20)
}

// Sampler is the one timing loop of every workload: a sample is the
// device time of one call: the span of its CUPTI activity records where
// libcupti loads (trace.go), else the time between two device events; both
// behind a stream hold where the driver has one (hold.go), so the host's
// launch of the call is not in it (docs/protocol.md, "What one sample is"). With flushBytes > 0,
// a memset of that many bytes (a new value each time, so no layer can skip
// the write) and a synchronize come before each sample, outside its events
// (cold L2). The gemm, attention and scan workloads take their samples
// through TimedLaunches; the TTT model, whose calls the harness drives one
// at a time, keeps a Sampler and takes one per call. On the worker thread.
type Sampler struct {
	r          *Runtime
	what       string // the call, for errors
	ev         [2]uintptr
	flush      Ptr
	flushBytes int64
	hold       *streamHold // nil: the samples hold the launch
	traced     bool        // the samples are CUPTI record spans (trace.go)
	n          int
}

// NewSampler makes what's events, flush buffer and hold; Close frees them.
func (r *Runtime) NewSampler(what string, flushBytes int64) (s *Sampler, err error) {
	s = &Sampler{r: r, what: what, flushBytes: flushBytes}
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	for i := range s.ev {
		if s.ev[i], err = r.NewEvent(); err != nil {
			return s, err
		}
	}
	if flushBytes > 0 {
		if s.flush, err = r.Alloc(flushBytes); err != nil {
			return s, fmt.Errorf("%s --cold-cache: flush buffer of %d MiB: %w", what, flushBytes>>20, err)
		}
	}
	s.hold = r.newHold()
	if r.Tracer != nil { // what ran before (warmup, compile) is not a sample's: complete it, drop its records
		if err = r.Sync(); err != nil {
			return s, err
		}
		if _, _, err = r.spanOf(); err != nil {
			return s, err
		}
		s.traced = true
	}
	return s, nil
}

// Traced says whether the samples so far are CUPTI record spans.
func (s *Sampler) Traced() bool { return s.traced }

// Held says whether the samples so far ran behind a hold (the host launch
// not in them); false once a sample had to fall back.
func (s *Sampler) Held() bool { return s.hold != nil }

// Sample runs launch once and returns its device milliseconds. A launch
// the hold cannot take (the driver refused the wait, or the launch itself
// waited on the device until the watchdog released it) is run again
// without a hold, and every later sample is taken without one.
func (s *Sampler) Sample(launch func() error) (float64, error) {
	r := s.r
	if s.flushBytes > 0 {
		if err := r.Fill32(s.flush, uint32(s.n+1), s.flushBytes/4); err != nil {
			return 0, err
		}
		if err := r.Sync(); err != nil {
			return 0, err
		}
		if s.traced { // the flush's memset is not the call's
			if _, _, err := r.spanOf(); err != nil {
				return 0, err
			}
		}
	}
	s.n++
	held := false
	if s.hold != nil {
		ok, err := s.hold.heldLaunch(r, s.ev[0], s.ev[1], launch)
		if err != nil {
			return 0, err
		}
		if !ok { // time without a hold from here on
			if err := r.Sync(); err != nil {
				return 0, err
			}
			s.hold.free()
			s.hold = nil
		}
		held = ok
	}
	if !held {
		if err := r.Record(s.ev[0]); err != nil {
			return 0, err
		}
		if err := launch(); err != nil {
			return 0, err
		}
		if err := r.Record(s.ev[1]); err != nil {
			return 0, err
		}
	}
	ms, err := r.ElapsedMs(s.ev[0], s.ev[1])
	if err != nil {
		return 0, fmt.Errorf("%s: timed launch %d: %w", s.what, s.n-1, err)
	}
	if s.traced {
		span, ok, err := r.spanOf()
		if err != nil {
			return 0, fmt.Errorf("%s: timed launch %d: %w", s.what, s.n-1, err)
		}
		if !ok { // CUPTI saw none of this work: the events, from here on
			s.traced = false
		} else {
			ms = span
		}
	}
	return ms, nil
}

// Close frees the sampler's events, flush buffer and hold.
func (s *Sampler) Close() {
	for _, e := range s.ev {
		if e != 0 {
			s.r.Drv.EventDestroy(e)
		}
	}
	if s.flush != 0 {
		s.r.Free(s.flush)
	}
	s.hold.free()
}

// TimedLaunches is the sampling loop gemm, attention and scan share, on
// the worker thread after the first (compile) call: warmup untimed
// launches, then repeats samples (Sampler). r.LastHeld says whether the
// samples ran behind a hold. what names the call in errors.
func (r *Runtime) TimedLaunches(ctx context.Context, what string, launch func() error, calls Calls) ([]float64, error) {
	for i := 0; i < calls.Warmup; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := launch(); err != nil {
			return nil, err
		}
	}
	s, err := r.NewSampler(what, calls.flushBytes())
	if err != nil {
		return nil, err
	}
	defer s.Close()
	samples := make([]float64, 0, calls.Repeats)
	for i := 0; i < calls.Repeats; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ms, err := s.Sample(launch)
		if err != nil {
			return nil, err
		}
		samples = append(samples, ms)
	}
	r.LastHeld, r.LastTraced = s.Held(), s.Traced()
	return samples, nil
}
