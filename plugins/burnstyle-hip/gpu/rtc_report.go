package gpu

// NVRTCCompile compiles src with NVRTC alone — no driver, no GPU — for
// arch (e.g. "sm_90") with ptxas's per-kernel report on (registers, spill
// stores and loads, shared memory), and returns the image, the library's
// path and the compiler log. NVRTC is found as at run time
// (XBENCH_LIBNVRTC overrides), so a machine without a GPU catches compile
// errors and register spills.
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
	opts := append([]string{"--gpu-architecture=" + arch, "-std=c++17", "--ptxas-options=-v"}, defines...)
	image, log, err = r.build("nvrtc", src, opts)
	return image, path, log, err
}

// NVRTCReport is NVRTCCompile's log: the workloads' CompileReport.
func NVRTCReport(src string, defines []string, arch string) (string, error) {
	_, _, log, err := NVRTCCompile(src, defines, arch)
	return log, err
}
