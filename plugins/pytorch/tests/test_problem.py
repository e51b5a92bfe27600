"""The problem workload on the pytorch backend, CPU: every shipped problem
runs eager; the export is the model's output under the seed, and float32
agrees with the float64 reference within the workload's tolerance."""

import os

import numpy as np
import pytest

from xbench_pytorch import backend
from xbench_py import workloads as xw
from xbench_py import runner as xr
from xbench_py import tensors
from xbench_py import problems as xproblems

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "problems"))


def shipped():
    out = []
    for level in (1, 2):
        for name in sorted(os.listdir(xproblems.level_dir(ROOT, level))):
            # only <id>_<name>.py: a concurrent import of a problem file
            # (the go lane's tests) may leave __pycache__ beside them
            if name.endswith(".py") and name.split("_")[0].isdigit():
                out.append((level, int(name.split("_")[0])))
    return out


@pytest.fixture(scope="module")
def fw():
    b = backend.Backend()
    b.name = "pytorch"
    return b


def test_the_set_covers_the_kinds():
    assert len(shipped()) >= 12


@pytest.mark.parametrize("level,pid", shipped())
def test_every_problem_runs_eager(fw, level, pid):
    r = xr.run(fw, xw.Problem(problems=ROOT, level=level, problem=pid, warmup=0, repeats=2), "", "cpu")
    assert r["status"] == "ok", r.get("message")
    assert len(r["samples_ms"]) == 2 and all(s > 0 for s in r["samples_ms"])


@pytest.mark.parametrize("level,pid", [(1, 3), (2, 4)])
def test_export_float32_matches_float64(fw, tmp_path, level, pid):
    inputs = str(tmp_path / "inputs.safetensors")
    tensors.write_safetensors(inputs, {"seed": np.array([5], dtype=np.int32)})
    outs = {}
    for dtype in ("float32", "float64"):
        out = str(tmp_path / f"{dtype}.safetensors")
        rep = xr.export(fw, xw.Problem(problems=ROOT, level=level, problem=pid, dtype=dtype), "", "cpu", "", inputs, out)
        assert rep["status"] == "ok", rep.get("message")
        outs[dtype] = tensors.read_safetensors(out)["out"].astype(np.float64)
    a, b = outs["float32"], outs["float64"]
    rel = np.linalg.norm(a - b) / np.linalg.norm(b)
    assert 0 < rel < 1e-5  # float32 differs from float64, far below the 1e-3 tolerance


def test_same_seed_same_output_other_seed_not(fw, tmp_path):
    def export(seed):
        ip, op = str(tmp_path / f"i{seed}.safetensors"), str(tmp_path / f"o{seed}.safetensors")
        tensors.write_safetensors(ip, {"seed": np.array([seed], dtype=np.int32)})
        assert xr.export(fw, xw.Problem(problems=ROOT, level=2, problem=1), "", "cpu", "", ip, op)["status"] == "ok"
        return tensors.read_safetensors(op)["out"]
    assert np.array_equal(export(1), export(1)) and not np.array_equal(export(1), export(2))


def test_missing_problem_fails_naming_the_folder(fw):
    r = xr.run(fw, xw.Problem(problems=ROOT, level=1, problem=999, repeats=1), "", "cpu")
    assert r["status"] == "failed" and "no file 999_*.py" in r["message"]


def test_compile_variant_runs_one_problem(fw):
    r = xr.run(fw, xw.Problem(problems=ROOT, level=1, problem=4, warmup=0, repeats=2), "compile", "cpu")
    assert r["status"] == "ok", r.get("message")
    assert any("mode='default'" in w for w in r["warnings"])


def test_import_file_leaves_no_bytecode_in_the_users_folder(tmp_path, monkeypatch):
    # a problem set is the user's folder (a KernelBench checkout): importing
    # its files writes no __pycache__ there, and the setting is restored
    # (bytecode writing on, as where PYTHONDONTWRITEBYTECODE is unset: CI)
    import sys

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    f = tmp_path / "level1" / "1_tiny.py"
    f.parent.mkdir()
    f.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n")
    mod = xproblems.import_file(str(f), "problem")
    assert hasattr(mod, "Model")
    assert sorted(p.name for p in f.parent.iterdir()) == ["1_tiny.py"]
    assert sys.dont_write_bytecode is False
