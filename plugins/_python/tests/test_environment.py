"""xbench_py.environment: machine detection, the pinned sets, and the check
of an interpreter's frameworks (setup.sh --python, xbench doctor)."""

import os
import subprocess
import sys

import pytest

from xbench_py import environment as env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


class Ran:
    def __init__(self, rc, out=""):
        self.returncode, self.stdout = rc, out


def fake_run(results):
    def run(cmd, **_):
        if cmd[0] not in results:
            raise FileNotFoundError(cmd[0])
        return results[cmd[0]]
    return run


@pytest.mark.parametrize("tools,kfd,forced,want", [
    ({}, False, "", "cpu"),
    ({"nvidia-smi": Ran(0, "GPU 0: NVIDIA H100 (UUID: x)\n")}, False, "", "nvidia"),
    ({"nvidia-smi": Ran(9, "")}, False, "", "cpu"),  # a driver that lists no GPU
    ({"nvidia-smi": Ran(0, "No devices found\n")}, False, "", "cpu"),
    ({"rocm-smi": Ran(0, "")}, False, "", "amd"),
    ({}, True, "", "amd"),
    ({"nvidia-smi": Ran(0, "GPU 0: x\n")}, False, "amd", "amd"),
])
def test_detect(tools, kfd, forced, want):
    e = {"XBENCH_MACHINE": forced} if forced else {}
    got, how = env.detect(e, which=lambda n: n if n in tools else None, exists=lambda p: kfd, run=fake_run(tools))
    assert got == want, how


def test_detect_refuses_unknown_machine():
    with pytest.raises(env.MachineError, match="XBENCH_MACHINE='gpu'.*cpu, nvidia, amd"):
        env.detect({"XBENCH_MACHINE": "gpu"})


def test_cpu_set_is_requirements_txt():
    # CI's cached venv is keyed by requirements.txt's content: the CPU set is that file alone
    assert env.REQUIREMENTS["cpu"] == ("requirements.txt",)


def test_every_set_is_pinned():
    for machine, files in env.REQUIREMENTS.items():
        for f in files:
            lines = env.requirement_lines(os.path.join(ROOT, f))
            assert lines, f
            for line in lines:
                assert "==" in line, f"{f}: {line} is not pinned"


def versions(**kv):
    table = {k.replace("_", "-"): v for k, v in kv.items()}
    return lambda dist: table.get(dist, "")


GOOD = dict(torch="2.15.0", triton="3.9.0", jax="0.10.2", iree_base_runtime="3.13.0", iree_base_compiler="3.13.0",
            flash_semicrf="0.2.0", numpy="2.4.6", safetensors="0.8.0")


def findings(machine, vers, build, idx=None):
    e = {env.ROCM_INDEX_ENV: idx} if idx else {}
    return {(f.name, f.status): f for f in env.check(machine, ROOT, "PY", versions(**vers), lambda: build, e)}


@pytest.mark.parametrize("machine,vers,build,want", [
    ("cpu", GOOD, {"cuda": "13.2"}, {}),
    ("nvidia", dict(GOOD, jax_cuda13_plugin="0.10.2", cupti_python="13.2.0"), {"cuda": "13.2"}, {}),
    ("nvidia", GOOD, {"cuda": "13.2"}, {("jax-cuda13-plugin", "missing"): "PY -m pip install 'jax-cuda13-plugin[with-cuda]==0.10.2'",
                                        ("cupti-python", "missing"): "PY -m pip install 'cupti-python==13.2.0'"}),
    # cupti-python for CUDA 12 beside torch's CUDA 13: the device clock would load the wrong libcupti
    ("nvidia", dict(GOOD, jax_cuda13_plugin="0.10.2", cupti_python="12.8.0"), {"cuda": "13.2"},
     {("cupti-python", "mismatch"): "PY -m pip install 'cupti-python==13.*'",
      ("cupti-python", "unsupported"): "PY -m pip install 'cupti-python==13.2.0'"}),
    ("nvidia", dict(GOOD, jax_cuda13_plugin="0.10.2", cupti_python="13.2.0"), {"cuda": "", "hip": "7.2"},
     {("torch", "mismatch"): "PY -m pip install 'torch==2.15.0'"}),
    ("cpu", dict(GOOD, torch="2.4.1"), {}, {("torch", "unsupported"): "PY -m pip install 'torch==2.15.0'"}),
    ("cpu", dict(GOOD, iree_base_compiler="3.12.0"), {},
     {("iree-base-compiler", "unsupported"): "PY -m pip install 'iree-base-compiler==3.13.0'",
      ("iree-base-compiler", "mismatch"): "PY -m pip install 'iree-base-compiler==3.13.0'"}),
    # AMD: torch from PyPI is a CUDA build; ROCm's Triton comes with torch's ROCm build
    ("amd", dict(GOOD, triton="", jax_rocm7_plugin="0.10.2"), {"cuda": "13.2"},
     {("torch", "mismatch"): "PY -m pip install --extra-index-url https://download.pytorch.org/whl/rocm7.2 'torch==2.15.0+rocm7.2'",
      ("triton", "missing"): "PY -m pip install --extra-index-url https://download.pytorch.org/whl/rocm7.2 'torch==2.15.0+rocm7.2'"}),
    ("amd", dict(GOOD, triton="", pytorch_triton_rocm="3.9.0", jax_rocm7_plugin="0.10.2"), {"cuda": "", "hip": "7.2"}, {}),
])
def test_check(machine, vers, build, want):
    got = findings(machine, vers, build)
    bad = {k: f.fix for k, f in got.items() if f.status != "ok"}
    assert bad == want


def test_rocm_index_mirror():
    got = findings("amd", dict(GOOD, jax_rocm7_plugin="0.10.2"), {"cuda": "13.2"}, idx="https://mirror.example/rocm")
    assert got[("torch", "mismatch")].fix.startswith("PY -m pip install --extra-index-url https://mirror.example/rocm ")
    assert env.index_args("requirements-amd-torch.txt", {env.ROCM_INDEX_ENV: "https://m/x"}) == ["--extra-index-url", "https://m/x"]
    assert env.index_args("requirements-amd.txt", {}) == []


def test_release():
    assert env.release("2.15.0+cu132") == (2, 15, 0)
    assert env.release("0.10.2") > env.release("0.9.12")
    assert env.release("") == ()


def test_torch_build_of_this_venv():
    # read from torch/version.py without importing torch: the CPU set's
    # torch wheel is PyPI's CUDA build
    b = env.torch_build()
    assert env.release(b["cuda"]) >= (12,) and b["hip"] == ""


def test_check_cli_exit_codes(tmp_path):
    run = lambda m: subprocess.run(["python3", "-m", "xbench_py.environment", "check", "--machine", m, "--json"],
                                   cwd=ROOT, capture_output=True, text=True,
                                   env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "plugins", "_python")))
    p = run("cpu")
    assert p.returncode == 0 and '"machine": "cpu"' in p.stdout, p.stderr
    p = run("tpu")
    assert p.returncode == 2 and "--machine 'tpu'" in p.stderr
    # this venv's torch is a CUDA build: against the AMD set that is a
    # mismatch, and the text check exits 2 naming it
    p = subprocess.run([sys.executable, "-m", "xbench_py.environment", "check", "--machine", "amd"], cwd=ROOT,
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "plugins", "_python")))
    assert p.returncode == 2 and "mismatch (expected a ROCm build" in p.stdout, p.stdout + p.stderr


class FakeCuda:
    def __init__(self, n, err=None):
        self.n, self.err = n, err

    def init(self):
        if self.err:
            raise RuntimeError(self.err)

    def device_count(self):
        return self.n

    def get_device_name(self, i):
        return f"GPU{i}"


class FakeTorch:
    __version__ = "2.15.0"

    def __init__(self, cuda):
        self.cuda = cuda


@pytest.mark.parametrize("machine,torch,want", [
    ("cpu", None, {"opened": False, "why": "no GPU"}),
    ("nvidia", FakeTorch(FakeCuda(2)), {"opened": True, "devices": ["GPU0", "GPU1"], "by": "torch 2.15.0"}),
    ("nvidia", FakeTorch(FakeCuda(0, "The NVIDIA driver on your system is too old (found version 12040).\nmore")),
     {"opened": False, "why": "The NVIDIA driver on your system is too old (found version 12040)."}),
    ("amd", FakeTorch(FakeCuda(0)), {"opened": False, "why": "torch sees no GPU (device_count 0)"}),
    ("amd", ImportError("No module named 'torch'"), {"opened": False, "why": "torch does not import (ImportError: No module named 'torch')"}),
])
def test_gpu_probe(machine, torch, want):
    def load():
        if isinstance(torch, Exception):
            raise torch
        return torch
    got = env.gpu(machine, load)
    assert {k: got[k] for k in want} == want


def test_presence_only_packages_take_any_version():
    got = findings("cpu", dict(GOOD, numpy="1.21.0", safetensors="0.3.1"), {})
    assert got[("numpy", "ok")].expected == "any version" and ("safetensors", "ok") in got
    got = findings("cpu", dict(GOOD, numpy=""), {})
    assert got[("numpy", "missing")].fix == "PY -m pip install 'numpy==2.4.6'"
