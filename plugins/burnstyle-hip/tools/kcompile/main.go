// Command kcompile compiles the GPU program for one configuration with NVRTC
// only (no driver, no GPU needed) and prints ptxas's register, spill and
// shared-memory report per kernel: a free check before using a GPU.
//
//	XBENCH_LIBNVRTC=/path/libnvrtc.so.13 kcompile -size 125m -type mlp -dtype bfloat16
package main

import (
	"flag"
	"fmt"
	"os"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

func main() {
	size := flag.String("size", "125m", "model size")
	typ := flag.String("type", "linear", "linear or mlp")
	dtype := flag.String("dtype", "float32", "float32 or bfloat16")
	threads := flag.Int("threads", 0, "inner-loop threads per block (0 picks)")
	arch := flag.String("arch", "sm_90", "target architecture")
	flag.Parse()
	cfg := check.Config(*size, *typ, *dtype, false, 1, 2048)
	log, err := gputtt.CompileReport(cfg, gputtt.Options{InnerThreads: *threads}, *arch)
	fmt.Print(log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kcompile:", err)
		os.Exit(1)
	}
}
