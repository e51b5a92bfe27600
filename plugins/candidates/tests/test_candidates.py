"""The candidates backend on the CPU: the gate passes right candidates,
catches wrong and crashing ones as classified failures, and never times them."""

import os

import pytest

from xbench_candidates import backend as cb
from xbench_py import workloads as xw
from xbench_py import runner as xr

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "problems"))
SHIPPED = [(1, 1), (1, 6), (2, 1)]


@pytest.fixture
def fw():
    b = cb.Backend()
    b.name = "candidates"
    return b


def run(fw, monkeypatch, folder, level, pid, **env):
    monkeypatch.setenv("XBENCH_CANDIDATES", folder)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return xr.run(fw, xw.Problem(problems=ROOT, level=level, problem=pid, warmup=0, repeats=2), "", "cpu")


@pytest.mark.parametrize("level,pid", SHIPPED)
def test_right_candidate_is_timed(fw, monkeypatch, level, pid):
    r = run(fw, monkeypatch, os.path.join(ROOT, "candidates", "right"), level, pid)
    assert r["status"] == "ok", r.get("message")
    assert len(r["samples_ms"]) == 2 and r["warnings"][0].startswith("correct: 3 seeded inputs")


@pytest.mark.parametrize("level,pid", SHIPPED)
def test_wrong_candidate_is_caught(fw, monkeypatch, level, pid):
    r = run(fw, monkeypatch, os.path.join(ROOT, "candidates", "wrong"), level, pid)
    assert r["status"] == "failed" and r["message"].startswith("incorrect: max abs err ")
    assert r["samples_ms"] == [] and r["compile_ms"] == 0.0


def test_tolerance_settings_change_the_verdict(fw, monkeypatch):
    # ReLU for GELU is off by at most 0.17: atol 0.2 lets it through, and says so.
    r = run(fw, monkeypatch, os.path.join(ROOT, "candidates", "wrong"), 1, 6,
            XBENCH_CANDIDATES_ATOL="0.2", XBENCH_CANDIDATES_TRIALS="1")
    assert r["status"] == "ok", r.get("message")
    assert "1 seeded inputs" in r["warnings"][0] and "atol 0.2" in r["warnings"][0]
    bad = run(fw, monkeypatch, os.path.join(ROOT, "candidates", "right"), 1, 6, XBENCH_CANDIDATES_RTOL="-1")
    assert bad["status"] == "unsupported" and "XBENCH_CANDIDATES_RTOL='-1'" in bad["message"]


def _write(tmp_path, body):
    d = tmp_path / "level1"
    d.mkdir()
    (d / "1_square_matmul.py").write_text(body)
    return str(tmp_path)


def test_crashing_candidate_is_failed(fw, monkeypatch, tmp_path):
    folder = _write(tmp_path, "import torch\nclass ModelNew(torch.nn.Module):\n"
                              "    def forward(self, a, b):\n        raise RuntimeError('kernel launch failed')\n")
    r = run(fw, monkeypatch, folder, 1, 1)
    assert r["status"] == "failed" and r["message"] == "RuntimeError: kernel launch failed"


def test_wrong_shape_and_missing_class(fw, monkeypatch, tmp_path):
    folder = _write(tmp_path, "import torch\nclass ModelNew(torch.nn.Module):\n"
                              "    def forward(self, a, b):\n        return (a @ b)[:1]\n")
    r = run(fw, monkeypatch, folder, 1, 1)
    assert r["status"] == "failed" and "incorrect: output 0 has shape [1, 256]" in r["message"]
    (tmp_path / "level1" / "1_square_matmul.py").write_text("x = 1\n")
    r = run(fw, monkeypatch, folder, 1, 1)
    assert r["status"] == "failed" and "defines no ModelNew" in r["message"]


def test_no_candidate_or_folder_is_unsupported(fw, monkeypatch, tmp_path):
    r = run(fw, monkeypatch, os.path.join(ROOT, "candidates", "right"), 1, 2)
    assert r["status"] == "unsupported" and "no candidate for level1/2_batched_matmul.py" in r["message"]
    r = run(fw, monkeypatch, "relative/dir", 1, 1)
    assert r["status"] == "unsupported" and "XBENCH_CANDIDATES" in r["message"]


# Problems with KernelBench's level1 19_ReLU / 20_LeakyReLU interface (our
# own files, small inputs with negative values): the shipped candidates for
# the real set (problems/candidates/kernelbench, scripts/h100-kernelbench.sh)
# pass the gate on the CPU path.
ACTIVATION = """import torch
class Model(torch.nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope
    def forward(self, x):
        return {op}
def get_inputs():
    return [torch.randn(64, 96)]
def get_init_inputs():
    return []
"""


@pytest.mark.parametrize("name,op", [("19_ReLU.py", "torch.relu(x)"),
                                     ("20_LeakyReLU.py", "torch.nn.functional.leaky_relu(x, self.negative_slope)")])
def test_kernelbench_activation_candidates_pass_the_gate(fw, monkeypatch, tmp_path, name, op):
    (tmp_path / "level1").mkdir()
    (tmp_path / "level1" / name).write_text(ACTIVATION.format(op=op))
    monkeypatch.setenv("XBENCH_CANDIDATES", os.path.join(ROOT, "candidates", "kernelbench"))
    pid = int(name.split("_")[0])
    r = xr.run(fw, xw.Problem(problems=str(tmp_path), level=1, problem=pid, warmup=0, repeats=2), "", "cpu")
    assert r["status"] == "ok", r.get("message")
    assert "max abs err 0" in r["warnings"][0]
