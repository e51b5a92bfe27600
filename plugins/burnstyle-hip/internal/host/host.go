// Package host is what burnstyle-hip knows of the machine it runs on: the
// CPU's name, the hostname, and the memory check every CPU path makes
// before it allocates.
package host

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/xbench/xbench/harness/result"
)

// CPUName is /proc/cpuinfo's first "model name", or the architecture where
// there is none (non-Linux, some ARM kernels).
var CPUName = sync.OnceValue(func() string {
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		return v
	}
	return runtime.GOARCH
})

// CPUDevice is the host's CPU as a result names its device.
func CPUDevice() result.Device { return result.Device{Kind: "cpu", Name: CPUName(), Count: 1} }

// MemAvailable is /proc/meminfo's MemAvailable in bytes, or 0 when unknown.
func MemAvailable() int64 {
	v := strings.TrimSuffix(procField("/proc/meminfo", "MemAvailable"), " kB")
	kb, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0
	}
	return kb << 10
}

// procField returns the value of the first "key: value" line with that key.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Hostname is the machine's name, "" when unknown.
func Hostname() string {
	h, _ := os.Hostname()
	return h
}

// Available is the host's available memory (MemAvailable); a test
// replaces it to see Fits answer without allocating anything.
var Available = MemAvailable

// Fits is every CPU path's memory check, made before anything is
// allocated: a run whose estimate is above 90% of the available memory is
// answered oom with both sizes. Go cannot recover from running out of
// memory (the runtime aborts the process with a goroutine dump), so the
// estimate is the only place an oom can be an answer instead of a crash.
func Fits(need float64) (result.Status, string) {
	if avail := Available(); avail > 0 && need > float64(avail)*0.9 {
		return result.StatusOOM, fmt.Sprintf("needs about %.1f GiB of host memory, %.1f GiB available",
			need/(1<<30), float64(avail)/(1<<30))
	}
	return result.StatusOK, ""
}
