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
func (r *Runtime) TimedLaunches(ctx context.Context, what string, launch func() error, warmup, repeats int, flushBytes int64) ([]float64, error) {
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
		if ev[i], err = r.NewEvent(); err != nil {
			return nil, err
		}
		defer r.Drv.EventDestroy(ev[i])
	}
	var flush Ptr
	if flushBytes > 0 {
		var err error
		if flush, err = r.Alloc(flushBytes); err != nil {
			return nil, fmt.Errorf("%s --cold-cache: flush buffer of %d MiB: %w", what, flushBytes>>20, err)
		}
		defer r.Free(flush)
	}
	hold := r.newHold()            // nil: the samples hold the launch (hold.go)
	defer func() { hold.free() }() // the hold in use at the end (nil after a fallback, freed there)
	samples := make([]float64, 0, repeats)
	for i := 0; i < repeats; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if flushBytes > 0 {
			if err := r.Fill32(flush, uint32(i+1), flushBytes/4); err != nil {
				return nil, err
			}
			if err := r.Sync(); err != nil {
				return nil, err
			}
		}
		if hold != nil {
			ok, err := hold.heldLaunch(r, ev[0], ev[1], launch)
			if err != nil {
				return nil, err
			}
			if !ok { // the stream could not be held, or the launch waited on it: time without a hold from here on
				if err := r.Sync(); err != nil {
					return nil, err
				}
				hold.free()
				hold = nil
				i--
				continue
			}
		} else {
			if err := r.Record(ev[0]); err != nil {
				return nil, err
			}
			if err := launch(); err != nil {
				return nil, err
			}
			if err := r.Record(ev[1]); err != nil {
				return nil, err
			}
		}
		ms, err := r.ElapsedMs(ev[0], ev[1])
		if err != nil {
			return nil, fmt.Errorf("%s: timed launch %d: %w", what, i, err)
		}
		samples = append(samples, ms)
	}
	r.LastHeld = hold != nil
	return samples, nil
}

// FlushBytes is what TimeGEMMCold writes before each timed call: more than
// the L2 of any current GPU (H100 and H200 have 50 MiB).
const FlushBytes = 256 << 20
