package problems

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// kfdNodes is where the AMD kernel driver describes each GPU agent.
const kfdNodes = "/sys/class/kfd/kfd/topology/nodes/*/properties"

// GfxOverride is the HSA_OVERRIDE_GFX_VERSION backends on this machine
// need, or "": RDNA2 parts ROCm ships no code for (gfx1031 to gfx1036, an
// RX 6700 or 6600) run gfx1030's as "10.3.0", what the ROCm systems this
// harness replaces set for their RDNA2 cards. A value already in the
// environment wins. props are the KFD nodes' properties files' contents.
func GfxOverride(getenv func(string) string, props []string) string {
	if v := getenv("HSA_OVERRIDE_GFX_VERSION"); v != "" {
		return v
	}
	for _, p := range props {
		for _, line := range strings.Split(p, "\n") {
			f := strings.Fields(line)
			if len(f) != 2 || f[0] != "gfx_target_version" {
				continue
			}
			v, err := strconv.Atoi(f[1]) // 100302: major 10, minor 3, stepping 2
			if err == nil && v/10000 == 10 && v/100%100 == 3 && v%100 != 0 {
				return "10.3.0"
			}
		}
	}
	return ""
}

// kfdProperties reads this machine's KFD node properties (none without
// the AMD driver).
func kfdProperties() []string {
	var out []string
	m, _ := filepath.Glob(kfdNodes)
	for _, p := range m {
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, string(b))
		}
	}
	return out
}
