package cli

import (
	"os"
	"path/filepath"

	"github.com/xbench/xbench/harness/workload"
)

// CompileCacheEnv names the folder of --compile-cache in the environment of
// backend processes (and of SLURM array tasks, which rerun the sweep with
// the same flags); sessionMeta records it in every result's env.settings.
const CompileCacheEnv = "XBENCH_COMPILE_CACHE"

// compileCacheVars are the frameworks' own persistent-cache settings,
// pointed at sub-folders of the one --compile-cache folder: XLA's compiled
// executables (every one, however quick to compile: the minimums are 0),
// inductor's generated code, Triton's compiled kernels and Triton's
// autotuning choices (kept per exact autotuning key: a kernel's shape,
// layout and precision, never a bucket of shapes). A JIT backend then
// compiles and tunes a shape once across runs, machines sharing the folder,
// SLURM tasks and sweep --compile-ahead's helper processes; its compile_ms
// says when it did not have to, and triton's results name the config its
// autotuner chose (env.settings).
func compileCacheVars(dir string) map[string]string {
	return map[string]string{
		CompileCacheEnv:                              dir,
		"JAX_COMPILATION_CACHE_DIR":                  filepath.Join(dir, "jax"),
		"JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
		"JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES":  "0",
		"TORCHINDUCTOR_CACHE_DIR":                    filepath.Join(dir, "inductor"),
		"TORCHINDUCTOR_FX_GRAPH_CACHE":               "1",
		"TRITON_CACHE_DIR":                           filepath.Join(dir, "triton"),
		"TRITON_CACHE_AUTOTUNING":                    "1",
	}
}

// useCompileCache makes dir (absolute, created) the persistent compile
// cache of every backend this process starts. Backends inherit the
// harness's environment, as they do --max-reply's.
func useCompileCache(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return usagef("--compile-cache %q: %v", workload.Cut(dir, 80), err)
	}
	if err := writableFlag("--compile-cache", abs); err != nil {
		return err
	}
	for k, v := range compileCacheVars(abs) {
		os.Setenv(k, v)
	}
	return nil
}

// compileCacheSetting is the env.settings entry of a run with a compile
// cache, or nil.
func compileCacheSetting() map[string]string {
	if dir := os.Getenv(CompileCacheEnv); dir != "" {
		return map[string]string{"compile_cache": dir}
	}
	return nil
}
