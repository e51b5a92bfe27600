package cli

import (
	"testing"

	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/scan"
)

func TestSampleBucketsKeepsTheLargestAndSpreads(t *testing.T) {
	w := scan.Workload{}
	var jobs []Job
	// one T bucket (1024); K·C 12 (bucket 16), 20..32 (bucket 32), 40..64 (bucket 64)
	for _, kc := range [][2]string{{"4", "3"}, {"4", "5"}, {"4", "6"}, {"4", "7"}, {"4", "8"}, {"8", "5"}, {"8", "6"}, {"8", "7"}, {"8", "8"}} {
		cfg, err := workload.Resolve(w, "forward", map[string]string{"T": "1024", "K": kc[0], "C": kc[1]}, 3, 10)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, Job{Device: "cuda", Config: cfg})
	}
	for _, tc := range []struct {
		n    int
		want []string // K,C kept, in flag order
	}{
		{1, []string{"4,3", "4,8", "8,8"}},               // the largest of each bucket
		{2, []string{"4,3", "4,5", "4,8", "8,5", "8,8"}}, // the largest and the smallest
		{10, []string{"4,3", "4,5", "4,6", "4,7", "4,8", "8,5", "8,6", "8,7", "8,8"}},
	} {
		got := sampleBuckets(jobs, w, tc.n)
		var keys []string
		for _, j := range got {
			keys = append(keys, j.Config.Get("K")+","+j.Config.Get("C"))
		}
		if len(keys) != len(tc.want) {
			t.Errorf("n=%d: kept %v, want %v", tc.n, keys, tc.want)
			continue
		}
		for i := range keys {
			if keys[i] != tc.want[i] {
				t.Errorf("n=%d: kept %v, want %v", tc.n, keys, tc.want)
				break
			}
		}
	}
}
