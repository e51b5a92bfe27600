package sweep_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSlurmArray submits a sweep to a real one-node SLURM cluster started on
// this machine (scripts/slurm-local.sh: slurm-wlm and munge, installed with
// apt-get if missing) and checks that the 4 array tasks put every cell in
// the shared folder exactly once. CI sets XBENCH_SLURM=1; then any failure
// to get the cluster going fails the test instead of skipping it.
func TestSlurmArray(t *testing.T) {
	if os.Getenv("XBENCH_SLURM") != "1" {
		t.Skip("XBENCH_SLURM is not 1: skipping the SLURM test (it installs slurm-wlm and munge with apt-get and starts slurmctld and slurmd as root)")
	}
	xbench(t) // build first: a build failure is not a SLURM failure
	state := t.TempDir()
	script := filepath.Join(repoRoot, "scripts", "slurm-local.sh")
	slurmCmd := func(timeout time.Duration, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, script, append(args, state)...).CombinedOutput()
		return string(out), err
	}
	if out, err := slurmCmd(10*time.Minute, "start"); err != nil {
		logs, _ := slurmCmd(time.Minute, "logs")
		_, _ = slurmCmd(time.Minute, "stop")
		t.Fatalf("start a local SLURM cluster: %v\n%s\n%s", err, out, logs)
	}
	t.Cleanup(func() {
		if out, err := slurmCmd(2*time.Minute, "stop"); err != nil {
			t.Errorf("stop the local SLURM cluster: %v\n%s", err, out)
		}
	})
	env := []string{"SLURM_CONF=" + filepath.Join(state, "slurm.conf")}
	dir := filepath.Join(t.TempDir(), "sweep")
	diagnose := func() {
		logs, _ := slurmCmd(time.Minute, "logs")
		t.Log(logs)
		outs, _ := filepath.Glob(filepath.Join(dir, "_slurm", "task-*.out"))
		for _, o := range outs {
			raw, _ := os.ReadFile(o)
			t.Logf("==== %s\n%s", o, raw)
		}
	}

	o := runXbench(t, env, "sweep", "--slurm", "--slurm-tasks", "4", "--backends", "burnstyle-hip", "--device", "cpu",
		"--model-size", "tiny", "--seq-len", "16,32,48,64", "--ttt-type", "linear,mlp", "--warmup", "0", "--repeats", "3",
		"--results", dir)
	m := regexp.MustCompile(`submitted SLURM job (\d+): 4 array tasks over 8 cells`).FindStringSubmatch(o.stdout)
	if o.code != 0 || m == nil {
		diagnose()
		t.Fatalf("xbench sweep --slurm: exit %d\nstdout: %s\nstderr: %s", o.code, o.stdout, o.stderr)
	}
	job := m[1]

	// Wait for the array to leave the queue, then ask how each task ended.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		out, err := slurmClient(env, "squeue", "-h", "-j", job, "-o", "%i %T")
		if err != nil {
			diagnose()
			t.Fatalf("squeue: %v\n%s", err, out)
		}
		if strings.TrimSpace(out) == "" {
			break
		}
		if time.Now().After(deadline) {
			diagnose()
			t.Fatalf("job %s still queued or running after 5 minutes:\n%s", job, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	out, err := slurmClient(env, "scontrol", "-o", "show", "job", job)
	if err != nil {
		diagnose()
		t.Fatalf("scontrol show job %s: %v\n%s", job, err, out)
	}
	states := regexp.MustCompile(`JobState=(\S+)`).FindAllStringSubmatch(out, -1)
	if len(states) != 4 {
		diagnose()
		t.Fatalf("scontrol shows %d array tasks, want 4:\n%s", len(states), out)
	}
	for _, s := range states {
		if s[1] != "COMPLETED" {
			diagnose()
			t.Fatalf("an array task ended %s:\n%s", s[1], out)
		}
	}

	// Every cell landed once, from four different invocations (one per task).
	rows := readCSV(t, dir)
	if len(rows) != 8 {
		diagnose()
		t.Fatalf("%d cells in the folder, want 8", len(rows))
	}
	runIDs := map[string]bool{}
	for file, row := range rows {
		if row["status"] != "ok" {
			t.Errorf("%s: status %s (%s)", file, row["status"], row["message"])
		}
		raw, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		runIDs[r.RunID] = true
	}
	if len(runIDs) != 4 {
		t.Errorf("cells come from %d invocations, want 4 (one per array task)", len(runIDs))
	}
	status := runXbench(t, nil, "sweep", "--results", dir, "--status")
	if !regexp.MustCompile(`burnstyle-hip\s+8\s+0\s+0\s+0\s+0\s+0\s+0`).MatchString(status.stdout) {
		t.Errorf("--status does not show 8 ok and nothing pending:\n%s", status.stdout)
	}
}

func slurmClient(env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
