package cli

import (
	"slices"
	"testing"

	"github.com/xbench/xbench/harness/bench"
)

// Every command's session gets the ROCm settings when a job asks for rocm,
// whatever the backend, and records them; other kinds are left alone.
func TestWithRocm(t *testing.T) {
	base := bench.Meta{Settings: map[string]string{"compile_cache": "x"}}
	meta, env := withRocm(base, []string{"HIP_VISIBLE_DEVICES=1"}, "cpu", "rocm")
	if meta.Settings["HSA_ENABLE_SDMA"] != "0" || meta.Settings["RLIMIT_CORE"] != "0" || meta.Settings["compile_cache"] != "x" {
		t.Errorf("settings %v: want the ROCm settings beside the session's own", meta.Settings)
	}
	if !slices.Contains(env, "HSA_ENABLE_SDMA=0") || env[0] != "HIP_VISIBLE_DEVICES=1" {
		t.Errorf("env %v: want the pinning kept and the ROCm settings added", env)
	}
	if _, ok := base.Settings["HSA_ENABLE_SDMA"]; ok {
		t.Error("withRocm changed the caller's settings map")
	}
	meta, env = withRocm(base, nil, "cpu", "cuda")
	if len(env) != 0 || len(meta.Settings) != 1 {
		t.Errorf("cpu, cuda: %v %v, want nothing added", meta.Settings, env)
	}
	f := workloadFlags{device: "cuda:0,rocm:1"}
	if got := f.deviceKinds(); !slices.Equal(got, []string{"cuda", "rocm"}) {
		t.Errorf("deviceKinds = %v", got)
	}
}
