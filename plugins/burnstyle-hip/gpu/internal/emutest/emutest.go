// Package emutest opens the CPU emulator (../../emu) for the GPU packages'
// tests: it builds the emulator library once, keyed by its sources, and
// points the emulator's fake NVRTC at a kernel cache shared by every test
// binary and kept between runs, so each kernel program is compiled by g++
// once, whichever package's tests build it.
package emutest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// The emulator (emu/) stands in for libcuda, NVRTC and cuBLAS (and for HIP
// and hipRTC through its other face): it compiles the kernel sources with
// g++ and runs each block's threads as fibers, so the whole GPU path —
// library loading, the locked worker thread, compilation, launches with
// their argument layout, shared-memory sizes, barriers, shuffles and the
// cuBLAS column-major calls — is checked against the CPU float64 model on a
// machine with no GPU. It needs g++; without it the tests skip and say so.

var (
	once            sync.Once
	lib, cache, inc string
	buildErr        error
	buildLog        []byte
)

// keep is how long a cached kernel program unused by any test stays.
const keep = 14 * 24 * time.Hour

// Dir is the emulator's source folder (emu.h, the library's .cpp files).
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "emu")
}

// cacheRoot is xbench's cache folder, where test.sh keeps the hipRTC
// cache and CI keeps it between runs: $XBENCH_CACHE, else
// ~/.cache/xbench; "" when neither can be named.
func cacheRoot() string {
	if d := os.Getenv("XBENCH_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "xbench")
	}
	return ""
}

// cacheDir is $XBENCH_EMU_CACHE, else xbemu under cacheRoot, else a
// folder of this process.
func cacheDir() string {
	if d := os.Getenv("XBENCH_EMU_CACHE"); d != "" {
		return d
	}
	if r := cacheRoot(); r != "" {
		return filepath.Join(r, "xbemu")
	}
	d, _ := os.MkdirTemp("", "xbench-xbemu-*")
	return d
}

// build compiles the emulator library into the cache under a name keyed
// by the compiler and every source, written whole then renamed, so test
// binaries running at once (and other checkouts) never load half a file
// or each other's version.
func build() {
	inc = Dir()
	cache = cacheDir()
	kernels := filepath.Join(cache, "kernels")
	if buildErr = os.MkdirAll(kernels, 0o755); buildErr != nil {
		return
	}
	prune(kernels)
	srcs := []string{"xbemu.cpp", "xbemu_rtc.cpp", "xbemu_hip.cpp", "xbemu_lt.cpp", "xbemu_rocblas.cpp"}
	args := []string{"-std=c++17", "-O1", "-g", "-U_FORTIFY_SOURCE", "-shared", "-fPIC"}
	h := sha256.New()
	ver, _ := exec.Command("g++", "--version").Output()
	fmt.Fprintf(h, "%s\x00%s\x00", ver, strings.Join(args, " "))
	for _, f := range append(srcs, "emu.h") {
		data, err := os.ReadFile(filepath.Join(inc, f))
		if err != nil {
			buildErr = err
			return
		}
		fmt.Fprintf(h, "%s\x00%d\x00%s", f, len(data), data)
	}
	lib = filepath.Join(cache, "xbemu-"+hex.EncodeToString(h.Sum(nil))[:16]+".so")
	if _, err := os.Stat(lib); err == nil {
		return
	}
	tmp := lib + "." + strconv.Itoa(os.Getpid()) + ".tmp"
	for _, f := range srcs {
		args = append(args, filepath.Join(inc, f))
	}
	args = append(args, "-o", tmp, "-ldl", "-lpthread")
	if buildLog, buildErr = exec.Command("g++", args...).CombinedOutput(); buildErr != nil {
		os.Remove(tmp)
		return
	}
	buildErr = os.Rename(tmp, lib)
}

// prune removes kernel programs no test has used for keep (the emulator
// touches a program at each hit), so the cache follows the sources.
func prune(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > keep {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Use points the CUDA (and HIP) library variables at the emulator for t.
func Use(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("emulator tests compile kernels with g++; skipped in -short")
	}
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found: the GPU emulator cannot be built here")
	}
	once.Do(build)
	if buildErr != nil {
		t.Fatalf("building the emulator: %v\n%s", buildErr, buildLog)
	}
	for _, v := range []string{"XBENCH_LIBCUDA", "XBENCH_LIBNVRTC", "XBENCH_LIBCUBLAS"} {
		t.Setenv(v, lib)
	}
	t.Setenv("XBEMU_INCLUDE", inc)
	t.Setenv("XBEMU_CACHE", filepath.Join(cache, "kernels"))
}

// Lib is the emulator library's path (after Use).
func Lib() string { return lib }

// Open opens the emulator's CUDA face, closed when t ends.
func Open(t testing.TB) *gpu.Device {
	t.Helper()
	Use(t)
	d, err := gpu.Open("cuda")
	if err != nil {
		t.Fatalf("open emulated cuda: %v", err)
	}
	t.Cleanup(d.Close)
	if d.Info().Name != "xbemu CPU emulator" {
		t.Fatalf("opened %q, not the emulator", d.Info().Name)
	}
	return d
}

// OpenHIP opens the emulator through its HIP face (emu/xbemu_hip.cpp):
// gpu.Open("rocm") binds libamdhip64's and hipRTC's names, the kernels
// compile with XB_EMU_HIP (their AMD path, XB_HIP), a block gets 64 KB of
// LDS with no opt-in, and a shuffle waits for all lanes of a wave of the
// given width (64: CDNA's wavefront; stricter than the card).
func OpenHIP(t testing.TB, wave int) *gpu.Device {
	t.Helper()
	Use(t)
	t.Setenv("XBENCH_LIBHIP", lib) // the one emulator library has both faces
	t.Setenv("XBENCH_LIBHIPRTC", lib)
	// hipBLASLt and rocBLAS: the emulator's stand-ins (xbemu_rocblas.cpp)
	t.Setenv("XBENCH_LIBHIPBLASLT", lib)
	t.Setenv("XBENCH_LIBROCBLAS", lib)
	t.Setenv("XBEMU_WAVE", strconv.Itoa(wave))
	d, err := gpu.Open("rocm")
	if err != nil {
		t.Fatalf("open emulated rocm: %v", err)
	}
	t.Cleanup(d.Close)
	info := d.Info()
	if info.Kind != "rocm" || !strings.Contains(info.Name, "wave"+strconv.Itoa(wave)) {
		t.Fatalf("opened %+v, not the emulator's HIP face at wave%d", info, wave)
	}
	return d
}

// HIPTargets are the AMD targets the kernels compile for without a GPU:
// CDNA2 (MI200, wave64) and RDNA2 (RX 6800, wave32) with Debian 12's hipRTC
// (ROCm 5.2), and CDNA3 (MI300, gfx942), which crashes inside hipRTC 5.2,
// with Debian's clang 16 front end and ROCm 7.2.2's LLVM back end
// (gpu.GFX942Compile; XBENCH_LIBROCMLLVM names the back end).
var HIPTargets = []struct {
	Arch string
	Wave int
}{{"gfx90a", 64}, {"gfx1030", 32}, {"gfx942", 64}}

// HIPProgram is one program a workload compiles at run time.
type HIPProgram struct {
	Name    string
	Compile func(arch string) (gpu.HIPReport, error)
}

// CheckHIPRTC compiles every program with the real hipRTC
// (XBENCH_LIBHIPRTC; test.sh installs Debian's ROCm 5.2 and names it), and
// for gfx942 with clang 16 and ROCm's LLVM, for each AMD target, with no
// GPU, and fails on a compile error, a missing
// kernel, a wavefront size other than the target's or scratch memory past
// scratch["arch/kernel"] (absent: 0). Each program compiles once per
// target (XBENCH_HIPRTC_CACHE keeps the code objects between runs);
// subtests run in parallel.
func CheckHIPRTC(t *testing.T, programs []HIPProgram, scratch map[string]int) {
	if os.Getenv("XBENCH_LIBHIPRTC") == "" {
		t.Skip("set XBENCH_LIBHIPRTC to ROCm's libhiprtc.so (ROCm 5: libamdhip64.so) to compile the kernels for gfx90a and gfx1030")
	}
	for _, tg := range HIPTargets {
		for _, p := range programs {
			t.Run(tg.Arch+"/"+p.Name, func(t *testing.T) {
				if tg.Arch == "gfx942" && os.Getenv("XBENCH_LIBROCMLLVM") == "" {
					t.Skip("set XBENCH_LIBROCMLLVM to ROCm's LLVM (librocmllvm.so of PyPI's rocm-llvm-python) to compile for gfx942")
				}
				t.Parallel()
				t0 := time.Now()
				rep, err := p.Compile(tg.Arch)
				if err != nil {
					t.Fatalf("%v\n%s", err, rep.Log)
				}
				t.Logf("%.1fs %s", time.Since(t0).Seconds(), rep)
				if rep.Target != "amdgcn-amd-amdhsa--"+tg.Arch {
					t.Errorf("code object target %q, want %s", rep.Target, tg.Arch)
				}
				for _, k := range rep.Kernels {
					if k.Wavefront != tg.Wave {
						t.Errorf("%s: wave%d, want wave%d on %s", k.Name, k.Wavefront, tg.Wave, tg.Arch)
					}
					if allowed := scratch[tg.Arch+"/"+k.Name]; k.Scratch > allowed {
						t.Errorf("%s needs %d B of scratch a work-item (allowed %d): spills past the registers or a local array in memory",
							k, k.Scratch, allowed)
					}
				}
			})
		}
	}
}

// KeepCompiles points the NVRTC reports' cache (XBENCH_NVRTC_CACHE) at the
// user cache beside the emulator's, unless set: the real NVRTC then
// compiles a program once per source, options and library, and a rerun
// reads its report back, as test.sh's XBENCH_HIPRTC_CACHE does for hipRTC.
// Call it from TestMain (the compile tests run in parallel, where
// t.Setenv is not allowed).
func KeepCompiles() {
	if os.Getenv("XBENCH_NVRTC_CACHE") != "" {
		return
	}
	if r := cacheRoot(); r != "" {
		os.Setenv("XBENCH_NVRTC_CACHE", filepath.Join(r, "nvrtc"))
	}
}
