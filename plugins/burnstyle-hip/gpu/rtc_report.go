package gpu

// compileReport compiles src with NVRTC alone for arch and returns
// ptxas's report (AttentionCompileReport, ScanCompileReport).
func NVRTCReport(src string, defines []string, arch string) (string, error) {
	lib, path, err := specNVRTC.open()
	if err != nil {
		return "", err
	}
	preloadSiblings(path, "libnvrtc-builtins.so*")
	var r rtcAPI
	if err := bind(lib, path, r.table(nvrtcNames)); err != nil {
		return "", err
	}
	opts := append([]string{"--gpu-architecture=" + arch, "-std=c++17", "--ptxas-options=-v"}, defines...)
	_, log, err := r.build("nvrtc", src, opts)
	return log, err
}
