package gpu

import (
	"fmt"
	"os"
)

// NVRTCCompile compiles src with NVRTC alone — no driver, no GPU — for
// arch (e.g. "sm_90") with ptxas's per-kernel report on (registers, spill
// stores and loads, shared memory), and returns the image, the library's
// path and the compiler log. NVRTC is found as at run time
// (XBENCH_LIBNVRTC overrides), so a machine without a GPU catches compile
// errors and register spills. With XBENCH_NVRTC_CACHE set (a folder), a
// program compiled before by the same library is read from there.
func NVRTCCompile(src string, defines []string, arch string) (image []byte, path, log string, err error) {
	lib, path, err := specNVRTC.open()
	if err != nil {
		return nil, "", "", err
	}
	preloadSiblings(path, "libnvrtc-builtins.so*")
	var r rtcAPI
	if err := bind(lib, path, r.table(nvrtcNames)); err != nil {
		return nil, path, "", err
	}
	opts := archOpts([]string{"--gpu-architecture=" + arch, "-std=c++17", "--ptxas-options=-v"}, defines)
	stamp := path
	if st, err := os.Stat(path); err == nil { // the cache key changes with the library
		stamp = fmt.Sprintf("%s\x00%d %d", path, st.Size(), st.ModTime().UnixNano())
	}
	image, log, err = cachedBuild(os.Getenv("XBENCH_NVRTC_CACHE"), stamp, src, opts, func() ([]byte, string, error) {
		return r.build("nvrtc", src, opts)
	})
	return image, path, log, err
}

// NVRTCReport is NVRTCCompile's log: the workloads' CompileReport.
func NVRTCReport(src string, defines []string, arch string) (string, error) {
	_, _, log, err := NVRTCCompile(src, defines, arch)
	return log, err
}
