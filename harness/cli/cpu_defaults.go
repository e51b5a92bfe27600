package cli

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/workload"
)

// warnGPUSizedDefaults tells a user about to time a workload whose
// defaults are GPU-sized (workload.Smaller) on a CPU, with those defaults
// left unset, what that means and which values suit a CPU: attention's
// defaults on a CPU are a dozen cells of minutes each, which looked like a
// hang. device is the --device text (a comma list for sweep); "auto" counts
// as a CPU on a machine with no GPU device node.
func warnGPUSizedDefaults(a *App, fs *pflag.FlagSet, wl workload.Workload, device string) {
	s, ok := wl.(workload.Smaller)
	if !ok || !onCPU(device) {
		return
	}
	small := s.SmallDefaults()
	var flags []string
	for _, p := range wl.Params() {
		v, ok := small[p.Name]
		f := fs.Lookup(p.FlagName())
		if !ok || f == nil || fs.Changed(p.FlagName()) || f.DefValue == v {
			continue
		}
		flags = append(flags, p.Flag()+" "+v)
	}
	if len(flags) == 0 {
		return
	}
	fmt.Fprintf(a.Stderr, "warning: --workload %s's defaults are sized for a GPU and this runs on a CPU, where each cell may take minutes; "+
		"CPU-sized values (xbench verify's defaults): %s\n", wl.Name(), strings.Join(flags, " "))
}

// onCPU says whether the --device text names the CPU, or is auto on a
// machine without an NVIDIA or AMD GPU device node.
func onCPU(device string) bool {
	items := strings.Split(device, ",")
	if slices.Contains(items, "cpu") {
		return true
	}
	if !slices.Contains(items, "auto") {
		return false
	}
	for _, node := range []string{"/dev/nvidiactl", "/dev/kfd"} {
		if _, err := os.Stat(node); err == nil {
			return false
		}
	}
	return true
}
