package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

// The outside clock check (issue 42): a backend's samples come from a clock
// in its own process, which code running there (a candidate kernel) can
// patch. After a CPU cell of a process_per_cell backend is timed, the
// harness has the same prepared configuration called back to back
// (backend.Burster) and times that burst with Go's monotonic clock, which
// no candidate reaches. Samples that read far below the outside time a call
// are refused.
const (
	// OutsideClockSetting is the env.settings key that records the check:
	// the median, the outside time a call, the calls and their ratio, or
	// why the check was not made.
	OutsideClockSetting = "outside_clock"
	// OutsideClockMinRatio is the lowest median / outside-time-a-call an
	// honest cell gives. The burst pays per call what the samples pay
	// (the call itself and its Python wrapper), and the loop's own cost
	// only adds to the outside time; an honest CPU cell reads near 1
	// (docs/workloads/problem.md, "The outside clock" has the ratios
	// measured on the shipped problems under load). A quarter leaves room
	// for a loaded machine that slows the burst and not the samples'
	// median, while a clock slowed to hide more than 4x is refused.
	OutsideClockMinRatio = 0.25
	// burstTargetMs is how long a round of the burst should last: long
	// enough that the round trip's own cost and the clock's resolution
	// vanish in it.
	burstTargetMs = 100
	// burstRounds is how many rounds are timed; the fastest counts. Other
	// processes' load only slows a round, and on a shared machine it comes
	// and goes: a single 300 ms burst was measured reading an honest
	// cell's calls eight times slower than its samples' median.
	burstRounds = 5
	// burstMaxCalls bounds a round whose median is tiny (or patched to
	// read tiny): 1000 calls of a real call still last long enough.
	burstMaxCalls = 1000
	// burstMinLimitMs is the least BurstLimit: fifty honest rounds. A round
	// past the limit ends the check (its process is killed), so the limit
	// must outlast load, not only the clock's slack: at ten rounds a right
	// candidate was refused on the 2-core CI machine under the test lanes'
	// load (docs/results/ci-time.md).
	burstMinLimitMs = 50 * burstTargetMs
	// burstPrepareTimeout is what the whole burst request may take beyond
	// its rounds' limits: preparing (a candidate's gate again, seconds at
	// most) and the round trips.
	burstPrepareTimeout = 60 * time.Second
)

// BurstCalls is how many calls a round of the burst of a cell with this
// samples median makes: enough for burstTargetMs, at least 1, at most
// burstMaxCalls (a zero or non-finite median asks for the most).
func BurstCalls(medianMs float64) int {
	if !(medianMs > 0) || math.IsInf(medianMs, 0) {
		return burstMaxCalls
	}
	n := math.Ceil(burstTargetMs / medianMs)
	return int(math.Max(1, math.Min(burstMaxCalls, n)))
}

// BurstLimit is the longest a round of calls may last before it is ended:
// long enough that an honest round (about burstTargetMs) never comes near
// it, short enough that a cell whose median reads 1000x short cannot hold
// the harness for its calls' real time. At the limit the outside time a
// call is already at least twice what refuses the cell.
func BurstLimit(medianMs float64, calls int) time.Duration {
	ms := 2 * float64(calls) * medianMs / OutsideClockMinRatio
	if !(ms > burstMinLimitMs) || math.IsInf(ms, 0) {
		ms = burstMinLimitMs
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// OutsideVerdict compares a cell's samples median with the outside time a
// call of its burst: "" when they agree, else the refusal's message,
// naming the class. An unfinished burst's time is a lower bound, which
// refuses as well as a full one.
func OutsideVerdict(medianMs float64, rep backend.BurstReport) string {
	if rep.Calls <= 0 || !(rep.WallMs > 0) {
		return ""
	}
	outside := rep.WallMs / float64(rep.Calls)
	if medianMs >= OutsideClockMinRatio*outside {
		return ""
	}
	if rep.Unfinished {
		return fmt.Sprintf("%s: samples median %.4g ms, outside more than %.4g ms a call: %d calls did not finish within %.3gs",
			ClassOutsideClock, medianMs, outside, rep.Calls, rep.WallMs/1000)
	}
	return fmt.Sprintf("%s: samples median %.4g ms, outside %.4g ms a call over %d calls (the samples must read at least %.2g of it)",
		ClassOutsideClock, medianMs, outside, rep.Calls, OutsideClockMinRatio)
}

// outsideCheck applies the outside clock check to an ok result res of
// request req on b, run in a process of its own (process_per_cell): the
// result refused (status failed, the class in its message), or res with
// the check recorded under OutsideClockSetting. On a GPU it is not made: a
// call's device time is legitimately far below its wall time there.
func (s *Session) outsideCheck(ctx context.Context, b backend.Backend, req backend.RunRequest, res result.Result) result.Result {
	if res.Status != result.StatusOK || res.Stats == nil {
		return res
	}
	if res.Device.Kind != "cpu" {
		return WithSetting(res, OutsideClockSetting, "not checked: a "+res.Device.Kind+" call's device time is below its wall time by design")
	}
	bu, ok := b.(backend.Burster)
	if !ok {
		return WithSetting(res, OutsideClockSetting, "not checked: the backend has no burst op")
	}
	median := res.Stats.MedianMs
	calls := BurstCalls(median)
	limit := BurstLimit(median, calls)
	timeout := burstPrepareTimeout + burstRounds*limit
	bctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rep, err := bu.Burst(bctx, backend.BurstRequest{Run: req, Calls: calls, Rounds: burstRounds, Limit: limit})
	switch {
	case errors.Is(err, backend.ErrCannotBurst):
		return WithSetting(res, OutsideClockSetting, "not checked: "+backend.ErrorText(err))
	case err != nil && ctx.Err() != nil:
		// The cell's own deadline (--timeout) passed during the burst: a
		// timeout of the cell, as one during its run would be.
		res = s.refuse(res, "the cell's deadline passed during its outside clock check: "+backend.ErrorText(err))
		res.Status = result.StatusTimeout
		return res
	case err != nil && timedOut(bctx, err):
		return s.refuse(res, fmt.Sprintf("outside clock check could not run: preparing and %d rounds of %d calls took more than %s",
			burstRounds, calls, timeout))
	case err != nil:
		return s.refuse(res, "outside clock check could not run: "+backend.ErrorText(err))
	case rep.Status != result.StatusOK:
		// The cell passed, and the same configuration prepared again did
		// not: what was timed is not what the burst runs.
		return s.refuse(res, fmt.Sprintf("outside clock check could not run: its burst ended %s: %s", rep.Status, rep.Message))
	}
	if why := OutsideVerdict(median, rep); why != "" {
		return s.refuse(res, why)
	}
	outside := rep.WallMs / float64(rep.Calls)
	return WithSetting(res, OutsideClockSetting, fmt.Sprintf("median %.4g ms, outside %.4g ms a call over %d calls (ratio %.3g)",
		median, outside, rep.Calls, median/outside))
}

// refuse turns a timed result into a failed one with msg; its samples go,
// since they are what was found untrustworthy.
func (s *Session) refuse(res result.Result, msg string) result.Result {
	res.Status, res.Message, res.SamplesMs = result.StatusFailed, msg, nil
	return s.Finalize(res)
}
