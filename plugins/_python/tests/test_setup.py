"""setup.sh on the machines CI does not have: --dry-run under stand-in
nvidia-smi / rocm-smi names each set's GPU parts, the NVIDIA and AMD sets
resolve with uv's resolver (the one setup.sh installs with) for a Linux x86-64 GPU machine, bad --python is
refused, and a failed install is not marked complete."""

import hashlib
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import warnings

import pytest

from xbench_py import environment as env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def standins(tmp_path, nvidia=None, rocm=False):
    """A PATH folder holding nvidia-smi (exit 0 with a GPU line, or exit 9:
    no driver) and, with rocm, rocm-smi; it shadows any real one."""
    d = tmp_path / "bin"
    d.mkdir()
    (d / "nvidia-smi").write_text("#!/bin/sh\n" + ('echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)"\n' if nvidia else "exit 9\n"))
    if rocm:
        (d / "rocm-smi").write_text("#!/bin/sh\necho '========= ROCm System Management Interface ========='\n")
    for f in d.iterdir():
        f.chmod(0o755)
    return str(d)


def setup(tmp_path, *args, path_first=None, **extra):
    e = {k: v for k, v in os.environ.items() if k not in ("XBENCH_MACHINE", "XBENCH_PYTHON")}
    e.update(XBENCH_CACHE=str(tmp_path / "cache"), **extra)
    if path_first:
        e["PATH"] = path_first + os.pathsep + e["PATH"]
    return subprocess.run([os.path.join(ROOT, "setup.sh"), *args], capture_output=True, text=True, env=e, timeout=120)


@pytest.mark.parametrize("nvidia,rocm,want", [
    (True, False, ["machine: nvidia (nvidia-smi -L: GPU 0: NVIDIA H100", "requirements-nvidia.txt",
                   "jax-cuda13-plugin[with-cuda]==0.10.2", "cupti-python==13.2.0", "torch==2.15.0", "iree-base-runtime==3.13.0"]),
    (False, True, ["machine: amd (rocm-smi runs)", "jax-rocm7-plugin==0.10.2", "torch==2.15.0+rocm7.2",
                   "--extra-index-url https://download.pytorch.org/whl/rocm7.2", "iree-base-runtime==3.13.0"]),
    (False, False, ["machine: cpu", "requirements.txt: pip install -r requirements.txt", "jax[cpu]==0.10.2"]),
])
def test_dry_run_names_the_machines_set(tmp_path, nvidia, rocm, want):
    before = os.readlink(os.path.join(ROOT, ".venv")) if os.path.islink(os.path.join(ROOT, ".venv")) else None
    p = setup(tmp_path, "--dry-run", path_first=standins(tmp_path, nvidia, rocm))
    assert p.returncode == 0, p.stderr
    for w in want:
        assert w in p.stdout, f"{w!r} not in:\n{p.stdout}"
    assert "cupti-python" in p.stdout if nvidia else "cupti-python" not in p.stdout
    assert p.stdout.rstrip().endswith("dry run: nothing installed")
    # nothing installed, nothing built, .venv left alone
    assert not (tmp_path / "cache").exists()
    after = os.readlink(os.path.join(ROOT, ".venv")) if os.path.islink(os.path.join(ROOT, ".venv")) else None
    assert after == before


def test_dry_run_mirror(tmp_path):
    p = setup(tmp_path, "--dry-run", XBENCH_MACHINE="amd", XBENCH_TORCH_ROCM_INDEX="https://mirror.example/rocm")
    assert p.returncode == 0 and "--extra-index-url https://mirror.example/rocm -r requirements-amd-torch.txt" in p.stdout, p.stdout


def test_python_by_name_is_looked_up_on_path(tmp_path):
    d = tmp_path / "bin"
    d.mkdir()
    os.symlink(sys.executable, d / "xbench-test-python")
    p = setup(tmp_path, "--dry-run", "--python", "xbench-test-python", path_first=str(d))
    assert p.returncode == 0, p.stderr
    assert f"--python {d}/xbench-test-python: installs nothing" in p.stdout, p.stdout


def test_dry_run_python_checks_frameworks(tmp_path):
    # this venv's interpreter holds the CPU set: on an NVIDIA machine it
    # lacks JAX's CUDA plugin and cupti-python, each named with its fix
    p = setup(tmp_path, "--dry-run", "--python", sys.executable, XBENCH_MACHINE="nvidia")
    assert p.returncode == 0, p.stderr
    assert f"--python {sys.executable}: installs nothing" in p.stdout
    assert f"{sys.executable} -m pip install 'cupti-python==13.2.0'" in p.stdout
    assert "jax-cuda13-plugin" in p.stdout and "missing" in p.stdout


@pytest.mark.parametrize("value,flag,why", [
    ("/nonexistent/python3", "--python", "no such file"),
    ("{tmp}/python3", "--python", "not an executable file"),
    ("/bin/ls", "XBENCH_PYTHON", "not a Python interpreter"),
    ("/bin/true", "--python", "not a Python 3 interpreter"),
    ("xbench-no-such-python", "--python", "not found on PATH"),
])
def test_bad_python(tmp_path, value, flag, why):
    value = value.format(tmp=tmp_path)
    (tmp_path / "python3").write_text("not a program\n")  # mode 0644
    args, extra = (["--dry-run", "--python", value], {}) if flag == "--python" else (["--dry-run"], {"XBENCH_PYTHON": value})
    p = setup(tmp_path, *args, **extra)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.startswith(f'setup: {flag} "{value}": {why} (') and p.stderr.count("\n") == 1, p.stderr
    assert "expected: the path of a Python 3.11+ interpreter" in p.stderr


def test_bad_flag_and_machine(tmp_path):
    p = setup(tmp_path, "--dryrun")
    assert p.returncode == 2 and 'unknown flag "--dryrun"' in p.stderr
    p = setup(tmp_path, "--dry-run", XBENCH_MACHINE="gpu")
    assert p.returncode == 2 and "XBENCH_MACHINE='gpu' is not a machine (allowed: cpu, nvidia, amd)" in p.stderr


def clone(tmp_path):
    """A folder standing for a checkout: plugins/ and scripts/ linked."""
    work = tmp_path / "clone"
    work.mkdir()
    os.symlink(os.path.join(ROOT, "plugins"), work / "plugins")
    os.symlink(os.path.join(ROOT, "scripts"), work / "scripts")
    return work


@pytest.fixture(scope="session")
def uv():
    """The pinned uv setup_venv installs with (scripts/lib.sh uv_tool),
    installed into the default tools cache when missing."""
    p = subprocess.run(["bash", "-c", '. scripts/lib.sh; uv_tool >&2; echo "$UV"'], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


@pytest.mark.parametrize("machine,file", [("cpu", "requirements.txt"), ("amd", "requirements-amd-torch.txt")])
def test_failed_install_is_not_marked_complete(tmp_path, uv, machine, file):
    # setup_venv with a requirement no index has: uv fails, the venv is
    # left without .complete (so the next run starts over), setup names the
    # command; for the AMD set's torch, where it comes from and the mirror
    work = clone(tmp_path)
    for f in env.REQUIREMENTS[machine]:
        (work / f).write_text("xbench-no-such-package==1.0\n")
    e = dict(os.environ, XBENCH_CACHE=str(tmp_path / "cache"), XBENCH_UV=uv, UV_OFFLINE="1",
             UV_CACHE_DIR=str(tmp_path / "uv-cache"))
    p = subprocess.run(["bash", "-c", f"set -euo pipefail; . scripts/lib.sh; setup_venv {machine}"], cwd=work,
                       capture_output=True, text=True, env=e, timeout=300)
    assert p.returncode != 0, p.stderr
    assert "nothing is marked complete" in p.stderr and f"-r {file}" in p.stderr, p.stderr
    assert ("XBENCH_TORCH_ROCM_INDEX to a mirror" in p.stderr) == (machine == "amd"), p.stderr
    venvs = [d for d in (tmp_path / "cache").iterdir() if d.is_dir()]
    assert len(venvs) == 1 and (venvs[0] / "bin" / "python").exists(), venvs
    assert not (venvs[0] / ".complete").exists()
    assert not (work / ".venv").exists()


def resolve(uv, files, cache, extra_index=None):
    """uv's resolver (setup_venv's installer) on files for Linux x86-64
    (glibc 2.28), CPython 3.12, wheels only; {name: version} of what it would
    install. The answer is kept in cache keyed by the files' text, so a set
    that resolved once resolves again, and a rerun is instant."""
    text = "".join(open(os.path.join(ROOT, f)).read() for f in files)
    key = hashlib.sha256((text + str(extra_index) + uv).encode()).hexdigest()[:16]
    answer = os.path.join(cache, f"resolve-uv-{key}.json")
    if not os.path.exists(answer):
        os.makedirs(cache, exist_ok=True)
        cmd = [uv, "pip", "compile", "-q", "--system-certs", "--no-header", "--no-annotate", "--python-version", "3.12",
               "--python-platform", "x86_64-manylinux_2_28", "--only-binary", ":all:"]
        cmd += ["--extra-index-url", extra_index, "--index-strategy", "unsafe-best-match"] if extra_index else []
        cmd += [os.path.join(ROOT, f) for f in files]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        assert p.returncode == 0, f"{' '.join(files)} does not resolve:\n{p.stderr[-3000:]}"
        pins = {}
        for line in p.stdout.splitlines():
            line = line.split("#")[0].split(";")[0].strip()
            if "==" in line:
                name, version = line.split("==", 1)
                pins[env.norm(name.split("[")[0])] = version.strip()
        assert pins, f"uv pip compile printed no pins for {files}:\n{p.stdout}"
        with open(answer + ".tmp", "w") as f:
            json.dump(pins, f)
        os.rename(answer + ".tmp", answer)
    return json.load(open(answer))


def reachable(url):
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=10)
        return ""
    except urllib.error.HTTPError:
        return ""  # it answered
    except (urllib.error.URLError, OSError) as e:
        return str(getattr(e, "reason", e))


def test_gpu_sets_resolve(uv):
    cache = os.path.join(os.environ.get("XBENCH_CACHE", os.path.expanduser("~/.cache/xbench")), "resolve")
    nv = resolve(uv, env.REQUIREMENTS["nvidia"], cache)
    assert nv["jax-cuda13-plugin"] == nv["jax-cuda13-pjrt"] == nv["jax"] == nv["jaxlib"]
    # the device clock's cupti-python is for the CUDA of torch's libcupti
    assert env.release(nv["cupti-python"])[:2] == env.release(nv["nvidia-cuda-cupti"])[:2], nv
    assert nv["iree-base-runtime"] == nv["iree-base-compiler"]
    for name in ("torch", "triton", "flash-semicrf"):
        assert name in nv

    amd = resolve(uv, ["requirements-amd.txt"], cache)
    assert amd["jax-rocm7-plugin"] == amd["jax-rocm7-pjrt"] == amd["jax"] == amd["jaxlib"]
    assert amd["iree-base-runtime"] == amd["iree-base-compiler"]
    assert not [n for n in amd if n.startswith("nvidia-") or n == "torch"], amd  # PyPI's CUDA torch stays out

    index = env.rocm_index()
    why = reachable(index + "/torch/")
    torch_pins = env.requirement_lines(os.path.join(ROOT, env.ROCM_TORCH_FILE))
    assert any(line.startswith("torch==") and "+rocm" in line for line in torch_pins), torch_pins
    if why:
        warnings.warn(f"PyTorch's ROCm index {index} is unreachable from here ({why}): "
                      f"{env.ROCM_TORCH_FILE} ({', '.join(torch_pins)}) was not resolved; its pins were checked only")
        return
    rocm = resolve(uv, env.REQUIREMENTS["amd"], cache, extra_index=index)
    assert "+rocm" in rocm["torch"] and "pytorch-triton-rocm" in rocm, rocm


@pytest.mark.parametrize("which", ["venv", "base"])
def test_use_python(tmp_path, which):
    # a venv's interpreter: .venv is that venv (a venv over it would see
    # only its base's packages); a plain interpreter: a venv over it with
    # its site-packages visible, marked complete, its packages importable
    work = clone(tmp_path)
    py = sys.executable if which == "venv" else getattr(sys, "_base_executable", "")
    assert py and os.path.exists(py)
    e = dict(os.environ, XBENCH_CACHE=str(tmp_path / "cache"))
    p = subprocess.run(["bash", "-c", f"set -euo pipefail; . scripts/lib.sh; use_python --python {py}"], cwd=work,
                       capture_output=True, text=True, env=e, timeout=300)
    assert p.returncode == 0, p.stderr
    link = os.readlink(work / ".venv")
    if which == "venv":
        assert link == sys.prefix and not (tmp_path / "cache").exists()
    else:
        assert link.startswith(str(tmp_path / "cache" / "venv-python-")) and os.path.exists(os.path.join(link, ".complete"))
        cfg = open(os.path.join(link, "pyvenv.cfg")).read()
        assert "include-system-site-packages = true" in cfg, cfg


def test_second_setup_waits_for_the_first(tmp_path):
    # while one setup holds the venv's lock, another says so and waits,
    # then finds the venv complete and links it (it deletes nothing)
    work = clone(tmp_path)
    (work / "requirements.txt").write_text("xbench-no-such-package==1.0\n")
    key = hashlib.sha256(b"xbench-no-such-package==1.0\n").hexdigest()[:12]
    target = tmp_path / "cache" / f"venv-{key}"
    (target / "bin").mkdir(parents=True)
    (target / "bin" / "python").write_text("#!/bin/sh\n")
    (target / "bin" / "python").chmod(0o755)
    (target / ".complete").write_text("")
    held, release = tmp_path / "held", tmp_path / "release"
    holder = subprocess.Popen(["flock", f"{target}.lock", "sh", "-c", f"touch {held}; while [ ! -e {release} ]; do sleep 0.05; done"])
    while not held.exists():
        assert holder.poll() is None, "the lock holder ended early"
    e = dict(os.environ, XBENCH_CACHE=str(tmp_path / "cache"))
    p = subprocess.Popen(["bash", "-c", "set -euo pipefail; . scripts/lib.sh; setup_venv cpu"], cwd=work,
                         stderr=subprocess.PIPE, text=True, env=e)
    line = p.stderr.readline()
    assert "another setup is installing" in line and "waiting" in line, line
    assert not (work / ".venv").exists()
    release.write_text("")
    assert p.wait(timeout=60) == 0 and holder.wait(timeout=60) == 0
    assert os.readlink(work / ".venv") == str(target) and (target / ".complete").exists()
