package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The harness binary links no backend: every backend, burnstyle-hip among
// them, is a plugin process of its own (go-plugin), so building and testing
// the core never carries a contestant's code.
func TestLinksNoPlugin(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !strings.Contains(string(out), "github.com/xbench/xbench/harness/cli") {
		t.Fatalf("go list -deps gave %d packages, without harness/cli: %q", len(deps), out)
	}
	for _, p := range deps {
		if strings.HasPrefix(p, "github.com/xbench/xbench/plugins/") {
			t.Errorf("xbench links %s: backends must be plugin binaries, not linked into the harness", p)
		}
	}
}
