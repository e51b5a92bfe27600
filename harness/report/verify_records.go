package report

// Verify records: where they are found (the results folder, a verify/
// folder beside it, each --verify folder) and which record stands for a
// timed configuration.

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/verify"
	"github.com/xbench/xbench/harness/workload"
)

// VerifyBeside is the verify/ folder next to a results folder (a sweep's
// results/x/sweep beside results/x/verify, as scripts keep them; either
// may be in an archive, store.OpenTree), "" when there is none or it lies
// inside dir (read with the results already). Its records are read
// without being asked for: a report that said "not verified" while the
// verification sat beside it was wrong.
func VerifyBeside(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	beside := filepath.Join(filepath.Dir(abs), "verify")
	if beside == abs || strings.HasPrefix(beside, abs+string(filepath.Separator)) || !store.IsTree(beside) {
		return ""
	}
	return filepath.Join(filepath.Dir(filepath.Clean(dir)), "verify")
}

// AddVerify reads the verify records (_verify_*.json) below dir, a folder
// or archive outside the results (a sweep's verification kept beside it),
// so the tables and charts can say what was verified. It is an error when
// dir holds none: a typo must not read as "nothing verified".
func (r *Report) AddVerify(dir string) error {
	n := len(r.Verify)
	read := map[string]bool{} // a folder found beside the results and named by --verify is read once
	for _, v := range r.Verify {
		if abs, err := filepath.Abs(v.Path); err == nil {
			read[abs] = true
		}
	}
	t, err := store.OpenTree(dir)
	if err != nil {
		return fmt.Errorf("report: read verify records under %s: %w", dir, err)
	}
	again := false
	err = fs.WalkDir(t.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if name := d.Name(); strings.HasPrefix(name, verify.FilePrefix) && strings.HasSuffix(name, ".json") {
			if abs, err := filepath.Abs(t.Path(p)); err == nil && read[abs] {
				again = true
				return nil
			}
			var v VerifyRecord
			if err := readMemberJSON(t, p, &v); err != nil {
				return err
			}
			v.Path = t.Path(p)
			r.Verify = append(r.Verify, v)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("report: read verify records under %s: %w", dir, err)
	}
	if len(r.Verify) == n && !again {
		return fmt.Errorf("report: no verify records (%s*.json) under %s", verify.FilePrefix, dir)
	}
	if len(r.Verify) > n {
		r.VerifyDirs = append(r.VerifyDirs, dir)
	}
	return nil
}

// phaseCovers says whether a verify of phase verified checked what a
// result of phase timed computes: a backward (or both) verify compares the
// forward outputs and the gradients, so it stands for every phase that
// computes them; a forward verify compares outputs only and stands for
// the forward alone (a backward pass is code of its own: its gradients
// were never checked); inner_only stands for itself.
func phaseCovers(verified, timed string) bool {
	switch {
	case verified == timed:
		return true
	case timed == workload.PhaseInnerOnly || verified == workload.PhaseInnerOnly:
		return false
	case timed == workload.PhaseForward:
		return true
	default: // timed backward or both
		return verified == workload.PhaseBackward || verified == workload.PhaseBoth
	}
}

// GateSetting is the env.settings key under which the candidates backend,
// which checks each problem result itself before timing it (its gate,
// against the problem's eager Model on fresh seeded inputs, and again after
// the timed calls: docs/workloads/problem.md), records that the check
// passed, with GatePass as its value: such a result of the problem
// workload is verified by its own check, and needs no verify record.
const (
	GateSetting = "gate"
	GatePass    = "pass"
)

// verdictOf is res's verification: its own gate where its backend ran one
// and it passed (verified on its own configuration), else the verify
// record that stands for it (Verification).
func (r *Report) verdictOf(res result.Result) (verdict string, from result.Config, ok bool) {
	if res.Status == result.StatusOK && res.Config.Workload == "problem" && res.Env.Settings[GateSetting] == GatePass {
		return verify.Pass, res.Config, true
	}
	return r.Verification(res.Backend, res.Device.Kind, res.Config)
}

// Verification is backend's verify verdict that stands for configuration
// c on a device of deviceKind: a record of the same workload, dtype and
// every other parameter that is not a size axis, lengths of one class
// (a verify at T=20 does not cover T=4096), and a phase that checked what
// c's computes (phaseCovers), preferring the phase itself, then the most
// size axes equal, then the newest run. ok is false when the backend was never verified that way.
func (r *Report) Verification(backendName, deviceKind string, c result.Config) (verdict string, from result.Config, ok bool) {
	bestScore, bestRun := -1, ""
	w, err := workload.Lookup(c.Workload)
	if err != nil {
		return "", result.Config{}, false
	}
	for _, v := range r.Verify {
		vc := v.Config
		if vc.Workload != c.Workload || !sameNonSize(w, vc, c) || !phaseCovers(vc.Phase, c.Phase) {
			continue
		}
		for _, row := range v.Rows {
			// row.Device is "cuda (NVIDIA H100 ...)" or "cpu".
			if row.Backend != backendName || row.Dtype != c.Dtype() || row.Device != "" && !strings.HasPrefix(row.Device, deviceKind) {
				continue
			}
			// The closest record: a scale enum (model size) counts double,
			// as the size of the model matters more than its input length.
			score := 0
			if vc.Phase == c.Phase {
				score += 100 // the record of the phase itself first
			}
			for _, p := range w.Params() {
				if p.Scale && vc.Get(p.Name) == c.Get(p.Name) {
					score++
					if p.Kind == workload.Enum {
						score++
					}
				}
			}
			if score > bestScore || score == bestScore && v.RunID > bestRun {
				bestScore, bestRun, verdict, from, ok = score, v.RunID, row.Verdict, vc, true
			}
		}
	}
	return verdict, from, ok
}

// sameNonSize says whether a and b agree on every parameter that changes
// what is computed (every one but the Scale ones) and are of one length
// class (workload.SameLengthClass on every Length parameter).
func sameNonSize(w workload.Workload, a, b result.Config) bool {
	for _, p := range w.Params() {
		if !p.Scale && a.Get(p.Name) != b.Get(p.Name) {
			return false
		}
		if p.Length && !workload.SameLengthClass(a.Get(p.Name), b.Get(p.Name)) {
			return false
		}
	}
	return true
}
