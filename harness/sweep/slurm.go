package sweep

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// SlurmJob is a sweep handed to SLURM as a job array: task i runs shard i
// of Tasks into the shared results folder.
type SlurmJob struct {
	Xbench    string   // absolute path of the xbench binary (on the shared filesystem)
	Root      string   // checkout the backends come from (XBENCH_ROOT of the tasks)
	WorkDir   string   // where the tasks start
	Dir       string   // absolute sweep folder
	SweepFile string   // absolute sweep file the tasks read
	Tasks     int      // array size
	Force     bool     // pass --force to every task
	Args      []string // extra sbatch arguments (--partition, --time, --gres ...)
	Sbatch    string   // the sbatch command; "sbatch" when empty
}

// Script is the batch script of the job array.
func (j SlurmJob) Script() string {
	var b strings.Builder
	fmt.Fprintln(&b, "#!/bin/bash")
	fmt.Fprintln(&b, "# Written by xbench sweep --slurm: one array task per shard of the sweep.")
	fmt.Fprintln(&b, "#SBATCH --job-name=xbench-sweep")
	fmt.Fprintf(&b, "#SBATCH --array=0-%d\n", j.Tasks-1)
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(j.Dir, slurmDir, "task-%A_%a.out"))
	fmt.Fprintln(&b, "set -euo pipefail")
	fmt.Fprintf(&b, "cd %s\n", shellQuote(j.WorkDir))
	fmt.Fprintf(&b, "export XBENCH_ROOT=%s\n", shellQuote(j.Root))
	force := ""
	if j.Force {
		force = " --force"
	}
	fmt.Fprintf(&b, "exec %s sweep --config %s --results %s --shard \"${SLURM_ARRAY_TASK_ID}/%d\"%s\n",
		shellQuote(j.Xbench), shellQuote(j.SweepFile), shellQuote(j.Dir), j.Tasks, force)
	return b.String()
}

// ScriptPath is where Submit writes the script.
func (j SlurmJob) ScriptPath() string { return filepath.Join(j.Dir, slurmDir, "_sweep.sbatch") }

// Submit writes the script and submits it; it returns SLURM's job id.
func (j SlurmJob) Submit() (string, error) {
	if j.Tasks < 1 {
		return "", fmt.Errorf("submit sweep to SLURM: %d array tasks (need 1 or more)", j.Tasks)
	}
	if err := os.MkdirAll(filepath.Join(j.Dir, slurmDir), 0o755); err != nil {
		return "", fmt.Errorf("submit sweep to SLURM: %w", err)
	}
	if err := os.WriteFile(j.ScriptPath(), []byte(j.Script()), 0o755); err != nil {
		return "", fmt.Errorf("submit sweep to SLURM: write batch script: %w", err)
	}
	sbatch := j.Sbatch
	if sbatch == "" {
		sbatch = "sbatch"
	}
	args := append(append([]string{"--parsable"}, j.Args...), j.ScriptPath())
	cmd := exec.Command(sbatch, args...)
	cmd.Dir = j.WorkDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("submit sweep to SLURM: %s %s: %w: %s", sbatch, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	// --parsable prints "jobid" or "jobid;cluster".
	id, _, _ := strings.Cut(strings.TrimSpace(stdout.String()), ";")
	if id == "" {
		return "", fmt.Errorf("submit sweep to SLURM: %s printed no job id (stderr: %s)", sbatch, strings.TrimSpace(stderr.String()))
	}
	return id, nil
}

// SweepFilePath is where --slurm stores the sweep the tasks run.
func SweepFilePath(dir string) string { return filepath.Join(dir, slurmDir, "_sweep.json") }

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Submit hands a planned sweep to SLURM: it writes the effective sweep
// file (values are flag name -> value, what each array task reads) and the
// plan into the folder, then submits the job array. The job's Dir and
// SweepFile are filled from dir.
func Submit(dir string, values map[string]any, plan []Cell, job SlurmJob) (id string, err error) {
	job.Dir, job.SweepFile = dir, SweepFilePath(dir)
	if err := os.MkdirAll(filepath.Dir(job.SweepFile), 0o755); err != nil {
		return "", fmt.Errorf("prepare %s: %w", dir, err)
	}
	if err := SaveFile(job.SweepFile, values); err != nil {
		return "", err
	}
	if err := NewFolder(dir).WritePlan(plan); err != nil {
		return "", err
	}
	return job.Submit()
}
