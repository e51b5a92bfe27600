package problems_test

import (
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/problem"
)

func findProblem(r result.Result) (string, error) {
	f, err := problem.Find(r.Config.Get("problems"), r.Config.Int("level"), r.Config.Int("problem"))
	return f.Name, err // the file name of a result's problem
}
