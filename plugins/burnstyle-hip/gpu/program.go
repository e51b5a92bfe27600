package gpu

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"
)

// The prelude is the vocabulary every kernel source is written in: the
// vendor's names (CUDA, HIP, the emulator) for launch bounds, shuffles,
// shared memory and the dtypes' conversions.
//
//go:embed kernels/prelude.cuh
var preludeFS embed.FS

// Program is one program's text as the run-time compiler gets it: the
// prelude, then each of files from fsys's kernels/ folder (a workload's
// embedded kernel sources), each under a line naming it.
func Program(fsys fs.FS, files ...string) string {
	var b strings.Builder
	add := func(fsys fs.FS, f string) {
		data, err := fs.ReadFile(fsys, "kernels/"+f)
		if err != nil {
			panic(err) // embedded at build time; cannot be missing
		}
		fmt.Fprintf(&b, "// ---- %s\n%s\n", f, data)
	}
	add(preludeFS, "prelude.cuh")
	for _, f := range files {
		add(fsys, f)
	}
	return b.String()
}
