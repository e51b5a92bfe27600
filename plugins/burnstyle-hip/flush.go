package burnstylehip

// Timing modes (docs/protocol.md, "Timing modes"): cold-cache for GEMM and
// attention, on the GPU through gpu.TimeGEMMWith and TimeAttention's cold
// flag, on the CPU through a host buffer larger than the last-level cache;
// CUDA graphs for the GEMM on cuda (the TTT forward always replays one).

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/workload/gemm"
)

// minCPUFlushBytes is written on a CPU even when the LLC reads smaller or
// cannot be read (the Python contract uses the same floor).
const minCPUFlushBytes = 64 << 20

// modeUnsupported says why this backend cannot time req in its mode, or "".
func modeUnsupported(req backend.RunRequest) string {
	switch {
	case req.Mode.CUDAGraph && (req.Config.Workload != gemm.Name || gemmKind(req.Device) == ""):
		return Name + ": --cuda-graph is implemented for the gemm workload on a GPU only (its library call captured once as a CUDA or HIP graph, replays timed)"
	case req.Mode.ColdCache && req.Config.Workload != gemm.Name && req.Config.Workload != attentionName:
		return Name + ": --cold-cache is implemented for the gemm and attention workloads only (workload " + req.Config.Workload + ")"
	}
	return ""
}

var (
	cpuFlushOnce sync.Once
	cpuFlushBuf  []byte
)

// cpuFlush writes every byte of a host buffer twice the LLC (at least
// minCPUFlushBytes), allocated once per process, so the next call starts
// with the caches holding none of its operands.
func cpuFlush() {
	cpuFlushOnce.Do(func() { cpuFlushBuf = make([]byte, max(2*llcBytes(), minCPUFlushBytes)) })
	for i := range cpuFlushBuf {
		cpuFlushBuf[i]++
	}
}

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
