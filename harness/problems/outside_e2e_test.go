package problems_test

// End to end on the CPU through the binary and real candidates backend
// processes (issue 42): a candidate that tampers with its process at import
// (a slowed time.perf_counter, the in-process guard disarmed where there
// is one, torch.matmul replaced) is refused by the harness's outside
// clock, and an honest candidate run after it in the same invocation is
// judged and timed as when it runs alone, since each cell gets a fresh
// process (process_per_cell).

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
)

// candidates runs `xbench problems candidates` on level 1's problems of
// dir and returns its results by problem number, and its stderr.
func candidates(t *testing.T, dir, problem string) (map[int]result.Result, string) {
	t.Helper()
	res := filepath.Join(t.TempDir(), "res")
	out, errs, err := xbench(t, "problems", "candidates", "--candidates", dir, "--device", "cpu", "--level", "1",
		"--problem", problem, "--warmup", "1", "--repeats", "5", "--start-timeout", "5m", "--results", res)
	if err != nil {
		t.Fatalf("candidates %s: %v\n%s\n%s", dir, err, out, errs)
	}
	rs, _, err := store.ReadAll(res)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int]result.Result{}
	for _, r := range rs {
		byID[r.Config.Int("problem")] = r
	}
	return byID, errs
}

func TestOutsideClockAndFreshProcesses(t *testing.T) {
	together, errs := candidates(t, "harness/problems/testdata/outside", "1,2")
	// The cheat must have run first, or the honest one proves nothing.
	cheatAt := strings.Index(errs, "level1/1_square_matmul.py")
	honestAt := strings.Index(errs, "level1/2_batched_matmul.py")
	if cheatAt < 0 || honestAt < 0 || cheatAt > honestAt {
		t.Fatalf("the cheat (at %d) did not run before the honest candidate (at %d):\n%s", cheatAt, honestAt, errs)
	}
	cheat := together[1]
	if cheat.Status != result.StatusFailed || !strings.HasPrefix(cheat.Message, bench.ClassOutsideClock+": samples median ") {
		t.Errorf("cheat: %s %q, want failed by the class %q", cheat.Status, cheat.Message, bench.ClassOutsideClock)
	}
	alone, _ := candidates(t, "harness/problems/testdata/outside", "2")
	for name, r := range map[string]result.Result{"after the cheat": together[2], "alone": alone[2]} {
		// ok and the outside clock agreeing: neither the replaced
		// torch.matmul (it would be refused as incorrect) nor the slowed
		// clock (its median would read 1000x short and be refused) reached it.
		if r.Status != result.StatusOK || r.Message != "" || !strings.HasPrefix(r.Env.Settings[bench.OutsideClockSetting], "median ") {
			t.Errorf("honest candidate %s: %s %q, outside clock %q", name, r.Status, r.Message, r.Env.Settings[bench.OutsideClockSetting])
		}
	}
	// The gate's note (trials, seeds, tolerances, its max abs err) is the
	// same as alone: the candidate was compared with the same Model.
	if a, b := gateNote(together[2]), gateNote(alone[2]); a != b || a == "" {
		t.Errorf("gate notes differ:\n after the cheat %q\n alone           %q", a, b)
	}
}

// gateNote is the candidates backend's note of the gate a result passed.
func gateNote(r result.Result) string {
	for _, w := range r.Warnings {
		if strings.HasPrefix(w, "correct: ") {
			return w
		}
	}
	return ""
}

// The shipped honest candidate passes the outside clock check.
func TestOutsideClockPassesTheRightCandidate(t *testing.T) {
	rs, _ := candidates(t, "problems/candidates/right", "1")
	r := rs[1]
	if r.Status != result.StatusOK || !strings.HasPrefix(r.Env.Settings[bench.OutsideClockSetting], "median ") {
		t.Errorf("right candidate: %s %q, outside clock %q", r.Status, r.Message, r.Env.Settings[bench.OutsideClockSetting])
	}
}
