"""scripts/amd-campaign.sh's dry run on this CPU machine: the plan holds
every seed suite on --device rocm, the environment checks say what is not an
AMD machine, and every command's flags are flags of that xbench command
(a comma list only where the flag takes one), so the first run on an MI300X
does not stop at a typo."""

import os
import re
import subprocess


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
XBENCH = os.path.join(ROOT, "bin", "xbench")


def dry_run(tmp_path, *extra, **env):
    e = {k: v for k, v in os.environ.items() if k != "XBENCH_MACHINE"}
    e.update(env)
    return subprocess.run(["bash", os.path.join(ROOT, "scripts", "amd-campaign.sh"), "--dry-run", str(tmp_path / "out"), *extra],
                          capture_output=True, text=True, cwd=ROOT, env=e, timeout=120)


def commands(stdout):
    return [line.strip() for line in stdout.splitlines() if line.startswith("      bin/xbench ")]


def test_plan_holds_the_seed_suites(tmp_path):
    kb = tmp_path / "kb"
    (kb / "KernelBench" / "level1").mkdir(parents=True)
    p = dry_run(tmp_path, str(kb))
    assert p.returncode == 0, p.stderr
    assert p.stdout.rstrip().endswith("dry run: nothing run")
    assert not (tmp_path / "out").exists()
    cmds = commands(p.stdout)
    text = "\n".join(cmds)
    for want in ["--workload gemm --device rocm --backends burnstyle-hip,burnstyle-hip/rocblas,pytorch,triton,jax,iree "
                 "--dtype bfloat16,float32 --shapes square,llm",
                 "--workload attention --device rocm", "--shapes llm",
                 f"problems baseline --problems {kb}/KernelBench --level 1,2 --device rocm --hardware MI300X_xbench",
                 "--model-size 125m --ttt-type linear,mlp", "report --results"]:
        assert want in text, f"{want!r} not in the plan:\n{text}"
    for c in cmds:
        assert "--device rocm" in c or c.split()[1] in ("doctor", "report"), c
    # on this CPU machine the machine check fails and says how to force it
    assert "FAIL machine: cpu" in p.stdout and "XBENCH_MACHINE=amd" in p.stdout
    assert f"ok   KernelBench at {kb}" in p.stdout


def test_without_kernelbench_the_step_is_left_out(tmp_path):
    p = dry_run(tmp_path)
    assert p.returncode == 0 and "skip KernelBench: no KBDIR given" in p.stdout
    assert "problems baseline" not in p.stdout


def test_a_real_run_refuses_a_machine_that_is_not_amd(tmp_path):
    p = subprocess.run(["bash", os.path.join(ROOT, "scripts", "amd-campaign.sh"), str(tmp_path / "out")],
                       capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={k: v for k, v in os.environ.items() if k != "XBENCH_MACHINE"})
    assert p.returncode == 2 and "environment checks failed" in p.stderr
    assert not (tmp_path / "out").exists()


def flag_help(sub, workload):
    """{flag: takes a comma list} of one xbench command (its --help)."""
    args = [XBENCH, *sub] + (["--workload", workload] if workload else []) + ["--help"]
    out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=60)
    flags = {}
    for line in (out.stdout + out.stderr).splitlines():
        m = re.match(r"\s+(?:-\w, )?--([\w-]+)", line)
        if m:
            flags[m.group(1)] = "comma" in line.lower()
    assert flags, out.stdout + out.stderr
    return flags


def test_every_command_parses(tmp_path):
    kb = tmp_path / "kb"
    (kb / "KernelBench" / "level1").mkdir(parents=True)
    seen = {}
    for c in commands(dry_run(tmp_path, str(kb)).stdout):
        words = c.split()[1:]
        sub = words[:2] if words[0] == "problems" else words[:1]
        args = words[len(sub):]
        workload = args[args.index("--workload") + 1] if "--workload" in args else ""
        key = (tuple(sub), workload)
        if key not in seen:
            seen[key] = flag_help(sub, workload)
        flags = seen[key]
        for i, a in enumerate(args):
            if not a.startswith("--"):
                continue
            name = a[2:].split("=", 1)[0]
            assert name in flags, f"{c}: --{name} is not a flag of xbench {' '.join(sub)}"
            value = args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("--") else ""
            if "," in value and name not in ("backends",):
                assert flags[name], f"{c}: --{name} {value} is a comma list, which xbench {' '.join(sub)} does not take"
