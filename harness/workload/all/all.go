// Package all registers every workload. Adding a workload is one line here.
package all

import (
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/attention"
	"github.com/xbench/xbench/harness/workload/gemm"
	"github.com/xbench/xbench/harness/workload/problem"
	"github.com/xbench/xbench/harness/workload/scan"
	"github.com/xbench/xbench/harness/workload/ttt/reference"
)

func init() {
	workload.Register(reference.Workload{}) // ttt, with its float64 reference model
	workload.Register(gemm.Workload{})
	workload.Register(problem.Workload{})
	workload.Register(attention.Workload{})
	workload.Register(scan.Workload{})
}
