package gpu

import (
	"context"
	"fmt"
)

// timedLaunches is the sampling loop every Time* shares, on the worker
// thread after the first (compile) call: warmup untimed launches, then
// repeats launches each between two device events, behind a stream hold
// where the driver has one (hold.go), so a sample is the call's device time
// without its host launch; r.lastHeld says which. With flushBytes > 0, a
// memset of that many bytes (a new value each time, so no layer can skip
// the write) and a synchronize come before each sample, outside its events
// (cold L2). what names the call in errors.
func (r *rt) timedLaunches(ctx context.Context, what string, launch func() error, warmup, repeats int, flushBytes int64) ([]float64, error) {
	for i := 0; i < warmup; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := launch(); err != nil {
			return nil, err
		}
	}
	var ev [2]uintptr
	for i := range ev {
		var err error
		if ev[i], err = r.newEvent(); err != nil {
			return nil, err
		}
		defer r.drv.eventDestroy(ev[i])
	}
	var flush devPtr
	if flushBytes > 0 {
		var err error
		if flush, err = r.alloc(flushBytes); err != nil {
			return nil, fmt.Errorf("%s --cold-cache: flush buffer of %d MiB: %w", what, flushBytes>>20, err)
		}
		defer r.free(flush)
	}
	traced := r.tracer != nil // the samples are CUPTI record spans (trace.go)
	if traced {
		if err := r.sync(); err != nil { // the warmup's records are complete, then dropped
			return nil, err
		}
		if _, _, err := r.spanOf(); err != nil {
			return nil, err
		}
	}
	hold := r.newHold()            // nil: the samples hold the launch (hold.go)
	defer func() { hold.free() }() // the hold in use at the end (nil after a fallback, freed there)
	samples := make([]float64, 0, repeats)
	for i := 0; i < repeats; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if flushBytes > 0 {
			if err := r.fill32(flush, uint32(i+1), flushBytes/4); err != nil {
				return nil, err
			}
			if err := r.sync(); err != nil {
				return nil, err
			}
			if traced { // the flush's memset is not the call's
				if _, _, err := r.spanOf(); err != nil {
					return nil, err
				}
			}
		}
		if hold != nil {
			ok, err := hold.heldLaunch(r, ev[0], ev[1], launch)
			if err != nil {
				return nil, err
			}
			if !ok { // the stream could not be held, or the launch waited on it: time without a hold from here on
				if err := r.sync(); err != nil {
					return nil, err
				}
				hold.free()
				hold = nil
				i--
				continue
			}
		} else {
			if err := r.record(ev[0]); err != nil {
				return nil, err
			}
			if err := launch(); err != nil {
				return nil, err
			}
			if err := r.record(ev[1]); err != nil {
				return nil, err
			}
		}
		ms, err := r.elapsedMs(ev[0], ev[1])
		if err != nil {
			return nil, fmt.Errorf("%s: timed launch %d: %w", what, i, err)
		}
		if traced {
			span, ok, err := r.spanOf()
			if err != nil {
				return nil, fmt.Errorf("%s: timed launch %d: %w", what, i, err)
			}
			if !ok { // no records (CUPTI saw none of this work): the events from here on
				traced = false
			} else {
				ms = span
			}
		}
		samples = append(samples, ms)
	}
	r.lastHeld, r.lastTraced = hold != nil, traced
	return samples, nil
}
