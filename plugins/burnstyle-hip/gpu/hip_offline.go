package gpu

// Compiling the native backend's programs with the real hipRTC alone — no
// HIP device, no driver call — for a named AMD target, and reading each
// kernel's registers, spills and scratch from the code object. The AMD twin
// of CompileReport (NVRTC, sm_90): it shows on a machine without an AMD GPU
// that every kernel source compiles for ROCm and how it fits.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// HIPReport is one program compiled for one AMD target.
type HIPReport struct {
	Program string // what was compiled, for messages
	Arch    string // --offload-arch, "gfx90a"
	Target  string // the code object's target, "amdgcn-amd-amdhsa--gfx90a"
	Library string // the hipRTC library's path and version
	Image   int    // code object bytes
	Kernels []AMDKernel
	Log     string
}

func (r HIPReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s for %s (%s; %s): %d-byte code object\n", r.Program, r.Arch, r.Target, r.Library, r.Image)
	for _, k := range r.Kernels {
		fmt.Fprintf(&b, "  %s\n", k)
	}
	if strings.TrimSpace(r.Log) != "" {
		fmt.Fprintf(&b, "  log: %s\n", strings.TrimSpace(r.Log))
	}
	return b.String()
}

// Kernel is the named kernel's resources, or false.
func (r HIPReport) Kernel(name string) (AMDKernel, bool) {
	for _, k := range r.Kernels {
		if k.Name == name {
			return k, true
		}
	}
	return AMDKernel{}, false
}

var (
	// hipRTC 5.2 is not thread-safe (two compiles at once crash inside
	// it), so compiles take turns.
	offlineHIPMu    sync.Mutex
	offlineHIPOnce  sync.Once
	offlineHIP      *rtcAPI
	offlineHIPLib   string
	offlineHIPErr   error
	offlineHIPStamp string
)

// hiprtcOffline binds hipRTC once per process (specHIPRTC; XBENCH_LIBHIPRTC
// overrides). ROCm 5.x has no libhiprtc: its hipRTC lives in libamdhip64.
func hiprtcOffline() (*rtcAPI, string, error) {
	offlineHIPOnce.Do(func() {
		lib, path, err := specHIPRTC.open()
		if err != nil {
			offlineHIPErr = err
			return
		}
		preloadSiblings(path, "libhiprtc-builtins.so*")
		var r rtcAPI
		if err := bind(lib, path, r.table(hiprtcNames)); err != nil {
			offlineHIPErr = err
			return
		}
		var major, minor int32
		r.version(&major, &minor)
		offlineHIP, offlineHIPLib = &r, fmt.Sprintf("%s (hipRTC %d.%d)", path, major, minor)
		if st, err := os.Stat(path); err == nil { // the cache key changes with the library
			offlineHIPStamp = fmt.Sprintf("%d %d", st.Size(), st.ModTime().UnixNano())
		}
	})
	return offlineHIP, offlineHIPLib, offlineHIPErr
}

// HIPCompile compiles src for arch with the options openHIP uses; the code
// object must hold every kernel of want (what the host code fetches).
// gfx942, which hipRTC 5.2 cannot compile for, goes to GFX942Compile.
func HIPCompile(program, src string, defines []string, arch string, want ...string) (HIPReport, error) {
	if arch == "gfx942" {
		return GFX942Compile(program, src, defines, want...)
	}
	rep := HIPReport{Program: program, Arch: arch}
	r, lib, err := hiprtcOffline()
	if err != nil {
		return rep, err
	}
	rep.Library = lib
	opts := append(hipArchOpts(arch), defines...)
	image, log, err := cachedBuild(os.Getenv("XBENCH_HIPRTC_CACHE"), lib+"\x00"+offlineHIPStamp, src, opts, func() ([]byte, string, error) {
		offlineHIPMu.Lock()
		defer offlineHIPMu.Unlock()
		return r.build("hiprtc", src, opts)
	})
	rep.Log = log
	if err != nil {
		return rep, fmt.Errorf("%s for %s: %w", program, arch, err)
	}
	rep.Image = len(image)
	if rep.Target, rep.Kernels, err = amdKernels(image); err != nil {
		return rep, fmt.Errorf("%s for %s: %w", program, arch, err)
	}
	for _, w := range want {
		if _, ok := rep.Kernel(w); !ok {
			return rep, fmt.Errorf("%s for %s: the code object has no kernel %s", program, arch, w)
		}
	}
	return rep, nil
}

// hipArchOpts are hipRTC's options for arch ("" targets the current device).
func hipArchOpts(arch string) []string {
	o := []string{"-std=c++17"}
	if arch != "" {
		o = append(o, "--offload-arch="+arch)
	}
	return o
}

// cachedBuild is build, or its earlier result for the same compiler (stamp:
// the library's path, version, size and time), source and options, from
// the folder dir (test.sh names one for hipRTC under ~/.cache/xbench, which
// CI keeps; the NVRTC reports' folder is XBENCH_NVRTC_CACHE). With dir
// empty, every call compiles. A compile error is never cached.
func cachedBuild(dir, stamp, src string, opts []string, build func() ([]byte, string, error)) ([]byte, string, error) {
	if dir == "" {
		return build()
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", stamp, strings.Join(opts, "\x00"), src)
	key := filepath.Join(dir, hex.EncodeToString(h.Sum(nil))[:32])
	if image, err := os.ReadFile(key + ".co"); err == nil {
		log, _ := os.ReadFile(key + ".log")
		return image, string(log), nil
	}
	image, log, err := build()
	if err == nil && os.MkdirAll(dir, 0o755) == nil {
		// written whole, then renamed: a crash never leaves half an object
		for _, f := range []struct {
			ext  string
			data []byte
		}{{".log", []byte(log)}, {".co", image}} {
			tmp := key + f.ext + "." + strconv.Itoa(os.Getpid()) + ".tmp"
			if os.WriteFile(tmp, f.data, 0o644) == nil {
				os.Rename(tmp, key+f.ext)
			}
		}
	}
	return image, log, err
}
