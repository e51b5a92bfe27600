package runner

import (
	"os"
	"path/filepath"
	"strings"
)

// flakesEnabled reports whether nix would accept `nix develop <flake>`:
// both experimental features nix-command and flakes must be on, through
// NIX_CONFIG or a nix.conf. A variable so tests can decide it.
var flakesEnabled = func() bool {
	configs := []string{os.Getenv("NIX_CONFIG")}
	paths := []string{"/etc/nix/nix.conf"}
	if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
		paths = append(paths, filepath.Join(xdg, "nix", "nix.conf"))
	} else if home, err := os.UserHomeDir(); err == nil {
		paths = append(paths, filepath.Join(home, ".config", "nix", "nix.conf"))
	}
	for _, p := range paths {
		if raw, err := os.ReadFile(p); err == nil {
			configs = append(configs, string(raw))
		}
	}
	return featuresOn(strings.Join(configs, "\n"), "nix-command", "flakes")
}

// featuresOn reports whether nix.conf text turns on every feature named,
// through experimental-features or extra-experimental-features lines.
func featuresOn(conf string, want ...string) bool {
	on := map[string]bool{}
	for _, line := range strings.Split(conf, "\n") {
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		if key != "experimental-features" && key != "extra-experimental-features" {
			continue
		}
		for _, f := range strings.Fields(val) {
			on[f] = true
		}
	}
	for _, f := range want {
		if !on[f] {
			return false
		}
	}
	return true
}
