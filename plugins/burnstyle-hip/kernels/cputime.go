package kernels

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/name"
)

// backendName names the backend in errors.
const backendName = name.Backend

// minCPUFlushBytes is written on a CPU even when the LLC reads smaller or
// cannot be read (the Python contract uses the same floor).
const minCPUFlushBytes = 64 << 20

var (
	cpuFlushOnce sync.Once
	cpuFlushBuf  []uint64
)

// cpuFlush writes every word of a host buffer twice the LLC (at least
// minCPUFlushBytes), allocated once per process, so the next call starts
// with the caches holding none of its operands. Words, not bytes: every
// cache line is still read and written, in an eighth of the loop.
func cpuFlush() {
	cpuFlushOnce.Do(func() { cpuFlushBuf = flushWords(max(2*llcBytes(), minCPUFlushBytes)) })
	for i := range cpuFlushBuf {
		cpuFlushBuf[i]++
	}
}

// cpuFlushBytes is the size of the flush buffer (0 before the first flush).
func cpuFlushBytes() int { return 8 * len(cpuFlushBuf) }

// llcBytes is the largest CPU cache sysfs reports, or 0 when unknown.
func llcBytes() int {
	paths, _ := filepath.Glob("/sys/devices/system/cpu/cpu0/cache/index*/size")
	best := 0
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		text := strings.ToUpper(strings.TrimSpace(string(raw)))
		mult := 1
		switch {
		case strings.HasSuffix(text, "K"):
			mult = 1 << 10
		case strings.HasSuffix(text, "M"):
			mult = 1 << 20
		case strings.HasSuffix(text, "G"):
			mult = 1 << 30
		}
		if n, err := strconv.Atoi(strings.TrimRight(text, "KMG")); err == nil {
			best = max(best, n*mult)
		}
	}
	return best
}

// timeOnCPU is the CPU path's timing loop for every workload: the first
// call alone is compile_ms, then cfg.Warmup calls, then cfg.Repeats timed
// by the host clock, each after a host-cache flush outside the clock when
// the run is cold; a failed call ends the run as failed. what names the
// run in an interrupt's error.
func timeOnCPU(ctx context.Context, req backend.RunRequest, res result.Result, what string, call func() error) (result.Result, error) {
	cfg := req.Config
	var callErr error
	step := func() float64 {
		start := time.Now()
		callErr = call()
		return float64(time.Since(start).Nanoseconds()) / 1e6
	}
	res.CompileMs = step()
	for i := 0; i < cfg.Warmup && callErr == nil; i++ {
		step()
	}
	for i := 0; i < cfg.Repeats && callErr == nil; i++ {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("run %s %s: %w", backendName, what, err)
		}
		if req.Mode.ColdCache {
			cpuFlush() // before the clock starts: not in the sample
		}
		res.SamplesMs = append(res.SamplesMs, step())
	}
	if req.Mode.ColdCache {
		res.Env.Timing += fmt.Sprintf("; before each timed call a write over a %d MiB host buffer (cold caches), not timed", cpuFlushBytes()>>20)
	}
	if callErr != nil {
		res.Status, res.Message, res.SamplesMs = result.StatusFailed, callErr.Error(), []float64{}
		return res, nil
	}
	res.Status = result.StatusOK
	return res, nil
}
