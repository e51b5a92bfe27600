"""The problem workload's precision conventions, output types and memory,
on the CPU through the contract's run (the path the harness takes):
kernelbench (PyTorch's defaults) and strict-ieee set and record torch's
flags; an output that is not tensors is failed naming its type; an
out-of-memory cell frees what it held before the next one runs."""

import gc

import pytest
import torch

from xbench_pytorch import backend
from xbench_pytorch import problem
from xbench_py import workloads as xw
from xbench_py import runner as xr

MODEL = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return {ret}\n" \
        "def get_inputs():\n    return [torch.rand(4, 8)]\n" \
        "def get_init_inputs():\n    return []\n"


@pytest.fixture
def fw():
    b = backend.Backend()
    b.name = "pytorch"
    return b


def write(tmp_path, files: dict) -> str:
    d = tmp_path / "set" / "level1"
    d.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        (d / name).write_text(body)
    return str(tmp_path / "set")


def run(fw, folder, pid, **params):
    return xr.run(fw, xw.Problem(problems=folder, level=1, problem=pid, warmup=0, repeats=2, **params), "", "cpu")


@pytest.mark.parametrize("precision,cudnn", [("kernelbench", "true"), ("strict-ieee", "false")])
def test_precision_is_set_and_recorded(fw, tmp_path, precision, cudnn):
    folder = write(tmp_path, {"1_relu.py": MODEL.format(ret="torch.relu(x)")})
    # A previous request left the other convention's flags behind.
    problem.set_precision("strict-ieee" if precision == "kernelbench" else "kernelbench")
    r = run(fw, folder, 1, precision=precision)
    assert r["status"] == "ok", r.get("message")
    s = r["env"]["settings"]
    assert s["precision"] == precision
    assert s["torch.backends.cudnn.allow_tf32"] == cudnn == str(torch.backends.cudnn.allow_tf32).lower()
    # matmuls stay IEEE float32 under both: PyTorch's default, and KernelBench's
    assert s["torch.backends.cuda.matmul.allow_tf32"] == "false" and s["torch.float32_matmul_precision"] == "highest"


def test_kernelbench_is_pytorchs_defaults():
    # What a fresh PyTorch process has, in which KernelBench times its baselines.
    import subprocess
    import sys

    code = ("import torch; m = torch.backends.cuda.matmul; print(torch.backends.cudnn.allow_tf32, m.allow_tf32, "
            "m.allow_bf16_reduced_precision_reduction, m.allow_fp16_reduced_precision_reduction)")
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert [v == "True" for v in fresh] == [True, False, True, True] == list(problem.PRECISIONS["kernelbench"][:2]) + \
        [problem.PRECISIONS["kernelbench"][2]] * 2


def test_unknown_precision_is_unsupported(fw, tmp_path):
    folder = write(tmp_path, {"1_relu.py": MODEL.format(ret="torch.relu(x)")})
    r = run(fw, folder, 1, precision="tf32")
    assert r["status"] == "unsupported" and "precision 'tf32'" in r["message"]


@pytest.mark.parametrize("ret,what", [
    ("'done'", "returned a str"),
    ("None", "returned a NoneType"),
    ("3.5", "returned a float"),
    ("()", "returned an empty tuple"),
    ("(x, 'label')", "returned a tuple holding a str"),
])
def test_output_that_is_not_tensors_is_failed(fw, tmp_path, ret, what):
    folder = write(tmp_path, {"1_odd.py": MODEL.format(ret=ret)})
    r = run(fw, folder, 1)
    assert r["status"] == "failed" and what in r["message"] and "not a tensor or a tuple or list of tensors" in r["message"]
    assert r["samples_ms"] == []


def test_tuple_and_list_of_tensors_are_ok(fw, tmp_path):
    folder = write(tmp_path, {"1_pair.py": MODEL.format(ret="(x, [x * 2, x + 1])")})
    assert run(fw, folder, 1)["status"] == "ok"


# A problem that holds a tensor, then runs out of memory the way PyTorch's
# CPU allocator says it; its input is registered so the test can see it die.
OOM = """import torch, weakref
import xbench_oom_probe as probe
class Model(torch.nn.Module):
    def forward(self, x):
        big = torch.ones(1 << 20)
        probe.alive.append(weakref.ref(big))
        probe.alive.append(weakref.ref(x))
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate memory: "
                           "you tried to allocate 6597069766656 bytes. Error code 12 (Cannot allocate memory)")
def get_inputs():
    return [torch.rand(4, 8)]
def get_init_inputs():
    return []
"""


def test_oom_frees_the_cell_and_the_next_runs(fw, tmp_path, monkeypatch):
    import sys
    import types

    probe = types.ModuleType("xbench_oom_probe")
    probe.alive = []
    monkeypatch.setitem(sys.modules, "xbench_oom_probe", probe)
    folder = write(tmp_path, {"1_huge.py": OOM, "2_relu.py": MODEL.format(ret="torch.relu(x)")})
    r = run(fw, folder, 1)
    assert r["status"] == "oom" and "can't allocate memory" in r["message"]
    gc.collect()
    assert probe.alive and all(ref() is None for ref in probe.alive), "the oom cell's tensors are still held"
    r = run(fw, folder, 2)
    assert r["status"] == "ok", r.get("message")
