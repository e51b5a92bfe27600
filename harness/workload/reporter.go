package workload

import "github.com/xbench/xbench/harness/workload/view"

// Reporter is implemented by a workload whose report has sections of its
// own (GEMM's shape aggregates, the scan's crossover tables): it decides
// what to show from the results, in plain data, and harness/report draws
// it. A workload without it gets the generic report only.
type Reporter interface {
	ReportSections(v view.Results) []view.Section
}
