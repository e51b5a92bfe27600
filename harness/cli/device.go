package cli

// --device: a kind (auto, cpu, cuda, rocm) or one GPU of a kind (cuda:N,
// rocm:N). A GPU is pinned the way `sweep --gpus` pins a worker: the
// backend processes start with sweep.PinEnv(N) in their environment, so
// they see that one GPU as device 0 and are asked for the plain kind. The
// backends and the protocol never meet "cuda:N"; results record the
// physical GPU in env.visible_devices (bench.Session), as --gpus does.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/xbench/xbench/harness/sweep"
	"github.com/xbench/xbench/harness/workload"
)

// maxGPUIndex bounds N in cuda:N: far above any one host's GPUs, low
// enough that a typo such as a pasted UUID or a huge number is an error.
const maxGPUIndex = 1023

var deviceAllowed = strings.Join(devices, ", ") + ", or cuda:N / rocm:N to pin GPU N (0 to " + strconv.Itoa(maxGPUIndex) + ")"

// parseDevice splits a --device value into the kind the backend is asked
// for and the GPU to pin ("" for none).
func parseDevice(text string) (kind, gpu string, err error) {
	kind, index, pinned := strings.Cut(text, ":")
	if !pinned {
		if slices.Contains(devices, text) {
			return text, "", nil
		}
		return "", "", usagef("--device %q is not allowed (allowed: %s)", workload.Cut(text, 80), deviceAllowed)
	}
	n, convErr := strconv.Atoi(index)
	// strconv.Itoa(n) == index: one spelling per GPU (no "+1", "01"), so
	// cells and records never differ by how an index was typed.
	if (kind != "cuda" && kind != "rocm") || convErr != nil || n < 0 || n > maxGPUIndex || strconv.Itoa(n) != index {
		return "", "", usagef("--device %q is not allowed (allowed: %s)", workload.Cut(text, 80), deviceAllowed)
	}
	return kind, index, nil
}

// pinEnv is the environment of backend processes for a pinned GPU (none
// for "").
func pinEnv(gpu string) []string {
	if gpu == "" {
		return nil
	}
	return sweep.PinEnv(gpu)
}

// deviceText is how progress lines name where a job runs.
func deviceText(kind, gpu string) string {
	if gpu == "" {
		return kind
	}
	return kind + ":" + gpu
}

// pin is the one GPU the --device value(s) pin ("" for none). A command
// pins its backend processes once, so in a sweep's list the values may not
// disagree; spreading a sweep over GPUs is what --gpus does.
func (f *workloadFlags) pin() (string, error) {
	values := []string{f.device}
	if f.list {
		l, err := sweep.SplitList("device", f.device)
		if err != nil {
			return "", usagef("%s", workload.Cut(err.Error(), 200))
		}
		values = l
	}
	gpu := ""
	for i, v := range values {
		_, g, err := parseDevice(v)
		if err != nil {
			return "", err
		}
		if i > 0 && g != gpu {
			return "", usagef("--device %q pins different GPUs, or some values and not others (allowed: one cuda:N or rocm:N for the whole command, or kinds alone; spread a sweep over GPUs with --gpus)", workload.Cut(f.device, 80))
		}
		gpu = g
	}
	return gpu, nil
}

// pinned is the GPU a sweep's --device pins ("" for none).
func (f *sweepFlags) pinned() (string, error) {
	// --device cuda:N is a sweep on one worker pinned to GPU N: the --gpus
	// path with one id. Together with --gpus (which GPUs?) or --slurm (the
	// scheduler picks each task's GPUs) it is refused.
	pinned, err := f.w.pin()
	if err != nil {
		return "", err
	}
	if pinned != "" && f.gpus != "" {
		return "", usagef("--device %q and --gpus %q were both given (allowed: one of them: --device cuda:N or rocm:N pins the sweep to GPU N, --gpus spreads it over several)",
			workload.Cut(f.w.device, 80), workload.Cut(f.gpus, 80))
	}
	if pinned != "" && f.slurm {
		return "", usagef("--device %q and --slurm were both given (allowed: --device cuda or rocm with --slurm: SLURM gives each task its GPUs, e.g. --slurm-args=--gres=gpu:1)", workload.Cut(f.w.device, 80))
	}
	return pinned, nil
}
