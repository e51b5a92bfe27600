package gpu

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// libSpec says where one vendor library may live. The loader tries, in order:
// the override variable (a full path), each name bare (so the system loader's
// own search, LD_LIBRARY_PATH included, applies), then each name in each
// directory. Nothing is needed at build time.
type libSpec struct {
	what  string   // "CUDA driver", for messages
	env   string   // override variable holding a full path
	names []string // file names, preferred first
	dirs  []string // directories; entries may be globs
}

// cudaToolkitDirs lists where NVRTC and cuBLAS live on common installs; the
// H100 machine has them under /usr/local/cuda-13.0/targets/x86_64-linux/lib.
func cudaToolkitDirs() []string {
	var d []string
	for _, v := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if root := os.Getenv(v); root != "" {
			d = append(d, filepath.Join(root, "lib64"), filepath.Join(root, "targets", archTarget(), "lib"))
		}
	}
	return append(d,
		"/usr/local/cuda/lib64",
		"/usr/local/cuda/targets/"+archTarget()+"/lib",
		"/usr/local/cuda-*/targets/"+archTarget()+"/lib",
		"/usr/local/cuda-*/lib64",
		"/usr/lib/"+archTriplet(),
		"/usr/lib64",
	)
}

func rocmDirs() []string {
	var d []string
	if root := os.Getenv("ROCM_PATH"); root != "" {
		d = append(d, filepath.Join(root, "lib"))
	}
	return append(d, "/opt/rocm/lib", "/opt/rocm-*/lib", "/usr/lib/"+archTriplet(), "/usr/lib64")
}

func archTarget() string {
	if runtime.GOARCH == "arm64" {
		return "sbsa-linux"
	}
	return "x86_64-linux"
}

func archTriplet() string {
	if runtime.GOARCH == "arm64" {
		return "aarch64-linux-gnu"
	}
	return "x86_64-linux-gnu"
}

var (
	specCUDA = libSpec{"CUDA driver", "XBENCH_LIBCUDA", []string{"libcuda.so.1", "libcuda.so"},
		[]string{"/usr/lib/" + archTriplet(), "/usr/lib64", "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib"}}
	specNVRTC = libSpec{"NVRTC", "XBENCH_LIBNVRTC",
		[]string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}, cudaToolkitDirs()}
	specCUBLAS = libSpec{"cuBLAS", "XBENCH_LIBCUBLAS",
		[]string{"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, cudaToolkitDirs()}
	specHIP = libSpec{"HIP runtime", "XBENCH_LIBHIP",
		[]string{"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"}, rocmDirs()}
	// CUPTI: the CUDA toolkit's extras/CUPTI, or the nvidia-cuda-cupti
	// wheel PyTorch installs (the H100 machine's system loader finds it)
	specCUPTI = libSpec{"CUPTI", "XBENCH_LIBCUPTI",
		[]string{"libcupti.so.13", "libcupti.so.12", "libcupti.so"}, append([]string{
			"/usr/local/cuda/extras/CUPTI/lib64", "/usr/local/cuda-*/extras/CUPTI/lib64",
			"/usr/local/lib/python3*/dist-packages/nvidia/cu*/lib", "/usr/local/lib/python3*/dist-packages/nvidia/cuda_cupti/lib",
			"/usr/lib/python3*/dist-packages/nvidia/cu*/lib", "/usr/lib/python3/dist-packages/nvidia/cuda_cupti/lib",
		}, cudaToolkitDirs()...)}
	// ROCm 5.x (Debian 12's 5.2 included) has no libhiprtc: hipRTC's
	// symbols are in libamdhip64 itself, the last names tried.
	specHIPRTC = libSpec{"hipRTC", "XBENCH_LIBHIPRTC",
		[]string{"libhiprtc.so", "libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so.5", "libamdhip64.so.5", "libamdhip64.so"}, rocmDirs()}
)

// candidates expands the spec into the ordered list of paths to try.
func (s libSpec) candidates() []string {
	var out []string
	if p := os.Getenv(s.env); p != "" {
		out = append(out, p)
	}
	out = append(out, s.names...)
	for _, d := range s.dirs {
		dirs := []string{d}
		if strings.ContainsAny(d, "*?[") {
			m, _ := filepath.Glob(d)
			sort.Sort(sort.Reverse(sort.StringSlice(m))) // newest version first
			dirs = m
		}
		for _, dir := range dirs {
			for _, n := range s.names {
				out = append(out, filepath.Join(dir, n))
			}
		}
	}
	return out
}

// open loads the first candidate that dlopen accepts. RTLD_GLOBAL lets a
// library's own dependencies (cuBLAS needs cublasLt) resolve against what is
// already loaded.
func (s libSpec) open() (handle uintptr, path string, err error) {
	var last string
	for _, c := range s.candidates() {
		if strings.Contains(c, "/") {
			if _, e := os.Stat(c); e != nil {
				continue
			}
		}
		h, e := purego.Dlopen(c, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if e == nil {
			return h, c, nil
		}
		if strings.Contains(c, "/") {
			last = e.Error() // a file that exists but would not load says why
		}
	}
	msg := fmt.Sprintf("no %s library found: looked for %s (override: %s=/full/path) in the system loader path and %s",
		s.what, strings.Join(s.names, ", "), s.env, strings.Join(s.dirs, ", "))
	if last != "" {
		msg += "; last load error: " + last
	}
	return 0, "", fmt.Errorf("%s", msg)
}

// preloadSiblings loads the files matching pattern in lib's folder, so that
// libraries lib opens by bare name later (NVRTC's and hipRTC's builtins
// library) are found even when that folder is not in the loader's path: a
// library whose soname is already loaded is not searched for again.
func preloadSiblings(lib, pattern string) {
	if !strings.Contains(lib, "/") {
		return // found through the system path, which will find its siblings too
	}
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(lib), pattern))
	for _, p := range m {
		purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	}
}

// funcs pairs each C function a vendor binding calls with the Go func
// field purego fills: one list per library, the one place a name meets its
// field (the symbol and header tests read the names from it).
type funcs []struct {
	name string
	fn   any // a pointer to a func field
}

// names are the C names, in order.
func (f funcs) names() []string {
	out := make([]string, len(f))
	for i, x := range f {
		out[i] = x.name
	}
	return out
}

// table is bind's form of f: each name to its field.
func (f funcs) table() map[string]any {
	t := make(map[string]any, len(f))
	for _, x := range f {
		t[x.name] = x.fn
	}
	return t
}

// bindFuncs opens the library s finds and binds every function of f;
// it returns the library's path.
func (s libSpec) bindFuncs(f funcs) (string, error) {
	lib, path, err := s.open()
	if err != nil {
		return "", err
	}
	return path, bind(lib, path, f.table())
}

// bind resolves each symbol in table into the Go function its pointer holds.
// A key may list alternatives, "a|b": the first one the library has wins
// (drivers keep old names for old programs, new ones may rename). A missing
// symbol is an error naming it, never a panic.
func bind(lib uintptr, libPath string, table map[string]any) error {
	for names, fptr := range table {
		var sym uintptr
		var err error
		for _, name := range strings.Split(names, "|") {
			if sym, err = purego.Dlsym(lib, name); err == nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("%s: symbol %s not found: %w", libPath, names, err)
		}
		purego.RegisterFunc(fptr, sym)
	}
	return nil
}

// cString is s with a trailing NUL, for C functions taking const char*.
func cString(s string) *byte {
	b := append([]byte(s), 0)
	return &b[0]
}

// goString copies a NUL-terminated C string.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	var b []byte
	for i := 0; ; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(p), i))
		if c == 0 {
			return string(b)
		}
		b = append(b, c)
	}
}
