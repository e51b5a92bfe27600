package problems

import (
	"os"
	"strings"
	"syscall"
)

// RocmEnv are the settings that make long ROCm runs of many small problems
// stable (docs/workloads/problem.md): copies by blit kernels instead of the
// SDMA engines, one hardware queue, kernel arguments in device memory.
var RocmEnv = []string{"HSA_ENABLE_SDMA=0", "GPU_MAX_HW_QUEUES=1", "HIP_FORCE_DEV_KERNARG=1"}

// IsRocm says whether device means a ROCm GPU here: "rocm", or "auto" on a
// machine with the AMD kernel driver (/dev/kfd) and no NVIDIA driver.
func IsRocm(device string, exists func(string) bool) bool {
	if device == "rocm" {
		return true
	}
	return device == "auto" && exists("/dev/kfd") && !exists("/proc/driver/nvidia/version")
}

// FileExists is the exists of IsRocm on this machine.
func FileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ApplyRocm turns core dumps off for this process and every backend it
// starts (RLIMIT_CORE is inherited) and returns the environment to start
// backends with (RocmEnv, and HSA_OVERRIDE_GFX_VERSION where GfxOverride
// says) and the settings to record in each result. A limit that
// cannot be lowered is recorded as such, not hidden.
func ApplyRocm() (env []string, settings map[string]string) {
	settings = map[string]string{}
	for _, kv := range RocmEnv {
		k, v, _ := strings.Cut(kv, "=")
		settings[k] = v
	}
	env = append([]string(nil), RocmEnv...)
	if v := GfxOverride(os.Getenv, kfdProperties()); v != "" {
		env = append(env, "HSA_OVERRIDE_GFX_VERSION="+v)
		settings["HSA_OVERRIDE_GFX_VERSION"] = v
	}
	lim := syscall.Rlimit{Cur: 0, Max: 0}
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &lim); err != nil {
		settings["RLIMIT_CORE"] = "unchanged: " + err.Error()
	} else {
		settings["RLIMIT_CORE"] = "0"
	}
	return env, settings
}
