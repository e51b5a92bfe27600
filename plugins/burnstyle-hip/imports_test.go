package burnstylehip

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A backend is a contestant: the harness grades it against the float64
// reference models (harness/workload/<name>/reference), so no code linked
// into the plugin binary may import one, or a backend that computes with
// the judge's code passes by construction. Test files and the GPU check
// tool (internal/check, tools/gpucheck), which compare this backend's
// output against a reference, are not part of the binary.

var referencePackage = regexp.MustCompile(`^github\.com/xbench/xbench/harness/workload/[^/]+/reference$`)

// referenceImports returns "importer -> reference" for every package of
// graph (lines "path import1 import2 ...", as go list prints them below)
// that imports a reference package.
func referenceImports(graph string) []string {
	var found []string
	for _, line := range strings.Split(strings.TrimSpace(graph), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		for _, imp := range fields[1:] {
			if referencePackage.MatchString(imp) {
				found = append(found, fields[0]+" -> "+imp)
			}
		}
	}
	return found
}

func TestReferenceImportsFindsAnImporter(t *testing.T) {
	for _, tc := range []struct {
		name, graph string
		want        []string
	}{
		{"clean", "a/cmd a/x\na/x github.com/xbench/xbench/harness/numeric", nil},
		{"ttt reference", "a/x github.com/xbench/xbench/harness/workload/ttt/reference fmt",
			[]string{"a/x -> github.com/xbench/xbench/harness/workload/ttt/reference"}},
		{"any workload's", "a/y github.com/xbench/xbench/harness/workload/scan/reference",
			[]string{"a/y -> github.com/xbench/xbench/harness/workload/scan/reference"}},
		{"a workload itself is not a reference", "a/z github.com/xbench/xbench/harness/workload/ttt", nil},
	} {
		if got := referenceImports(tc.graph); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestPluginDoesNotLinkAReference lists the plugin binary's non-test
// import graph with the go tool and fails on any reference import.
func TestPluginDoesNotLinkAReference(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./cmd/burnstyle-hip").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/burnstyle-hip: %v\n%s", err, out)
	}
	graph := string(out)
	// The listing must be the real graph: the CPU TTT model is in it.
	if !strings.Contains(graph, "github.com/xbench/xbench/plugins/burnstyle-hip/cpu/ttt ") {
		t.Fatalf("go list output does not include package cpu/ttt:\n%s", graph)
	}
	for _, imp := range referenceImports(graph) {
		t.Errorf("the plugin binary links a reference model: %s", imp)
	}
}
