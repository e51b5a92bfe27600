package cli

import (
	"strings"

	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/problems"
)

// withRocm applies the ROCm settings (problems.ApplyRocm: HSA_ENABLE_SDMA=0
// and the rest of RocmEnv, HSA_OVERRIDE_GFX_VERSION on RDNA2 parts ROCm
// ships no code for, core dumps off) when any of kinds runs on a ROCm GPU,
// for every backend alike: the backends' environment gets them and every
// result records them in env.settings. HIP_VISIBLE_DEVICES is recorded in
// env.visible_devices, as CUDA_VISIBLE_DEVICES is (bench.Session).
func withRocm(meta bench.Meta, env []string, kinds ...string) (bench.Meta, []string) {
	for _, k := range kinds {
		if problems.IsRocm(k, problems.FileExists) {
			e, s := problems.ApplyRocm()
			meta.Settings = mergeSettings(meta.Settings, s)
			return meta, append(append([]string(nil), env...), e...)
		}
	}
	return meta, env
}

// deviceKinds are the device kinds --device asks for ("rocm" of "rocm:1";
// each of a sweep's comma list).
func (f *workloadFlags) deviceKinds() []string {
	var out []string
	for _, d := range strings.Split(f.device, ",") {
		k, _, _ := strings.Cut(strings.TrimSpace(d), ":")
		out = append(out, k)
	}
	return out
}
