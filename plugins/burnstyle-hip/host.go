package burnstylehip

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// cpuName is /proc/cpuinfo's first "model name", or the architecture where
// there is none (non-Linux, some ARM kernels).
var cpuName = sync.OnceValue(func() string {
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		return v
	}
	return runtime.GOARCH
})

// memAvailable is /proc/meminfo's MemAvailable in bytes, or 0 when unknown.
func memAvailable() int64 {
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

func hostname() string {
	h, _ := os.Hostname()
	return h
}
