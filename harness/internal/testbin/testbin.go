// Package testbin builds what end-to-end tests run: xbench and every
// go-plugin backend binary (runtime "plugin") into one folder, the layout
// scripts/lib.sh build_xbench gives bin/, so the xbench under test finds the
// plugin binaries of the same source beside itself.
package testbin

import (
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/xbench/xbench/harness/manifest"
)

// Build compiles xbench and the plugin binaries of root's plugins/ into
// dir and returns the path of xbench.
func Build(root, dir string) (string, error) {
	ms, _, err := manifest.Discover(filepath.Join(root, "plugins"))
	if err != nil {
		return "", err
	}
	pkgs := []string{"./harness/cmd/xbench"}
	for _, m := range ms {
		if m.Runtime == manifest.RuntimePlugin {
			rel, err := filepath.Rel(root, filepath.Join(m.Dir, "cmd", m.Name))
			if err != nil {
				return "", err
			}
			pkgs = append(pkgs, "./"+filepath.ToSlash(rel))
		}
	}
	cmd := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %v: %v\n%s", pkgs, err, out)
	}
	return filepath.Join(dir, "xbench"), nil
}
