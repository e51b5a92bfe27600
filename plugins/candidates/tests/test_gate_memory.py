"""The gate is lean and a candidate's failure is contained: while ModelNew
runs, the only live inputs are its own and the Model's output does not exist
(a problem's inputs can be gigabytes: 19_ReLU's are 6.4 GB); and after a
candidate that ran out of memory, the next one gates and times."""

import sys
import types

import pytest

from xbench_candidates import backend as cb
from xbench_py import workloads as xw
from xbench_py import runner as xr

PROBLEM = """import torch, weakref
import xbench_gate_probe as probe
class Model(torch.nn.Module):
    def forward(self, x):
        out = x * 2
        probe.outputs.append(weakref.ref(out))
        return out
def get_inputs():
    # what is still alive when new inputs are made
    probe.at_make.append((sum(r() is not None for r in probe.inputs), sum(r() is not None for r in probe.outputs)))
    x = torch.rand(64, 32)
    probe.inputs.append(weakref.ref(x))
    return [x]
def get_init_inputs():
    return []
"""

# Counts what is alive while it runs and fails the gate (via its output) if
# more than one set of inputs or another output than the Model's lives.
LEAN = """import torch
import xbench_gate_probe as probe
class ModelNew(torch.nn.Module):
    def forward(self, x):
        inputs = sum(r() is not None for r in probe.inputs)
        outputs = sum(r() is not None for r in probe.outputs)
        probe.seen.append((inputs, outputs))
        return torch.relu(x) * 0 + x * 2
"""

OOM = """import torch
class ModelNew(torch.nn.Module):
    def forward(self, x):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 6.00 GiB")
"""


@pytest.fixture
def probe(monkeypatch):
    p = types.ModuleType("xbench_gate_probe")
    p.inputs, p.outputs, p.seen, p.at_make = [], [], [], []
    monkeypatch.setitem(sys.modules, "xbench_gate_probe", p)
    return p


def folders(tmp_path, candidates: dict):
    (tmp_path / "set" / "level1").mkdir(parents=True)
    for name in ("1_double.py", "2_double.py"):
        (tmp_path / "set" / "level1" / name).write_text(PROBLEM)
    (tmp_path / "cand" / "level1").mkdir(parents=True)
    for name, body in candidates.items():
        (tmp_path / "cand" / "level1" / name).write_text(body)
    return str(tmp_path / "set"), str(tmp_path / "cand")


def run(monkeypatch, problems, cands, pid):
    fw = cb.Backend()
    fw.name = "candidates"
    monkeypatch.setenv("XBENCH_CANDIDATES", cands)
    return xr.run(fw, xw.Problem(problems=problems, level=1, problem=pid, warmup=0, repeats=2), "", "cpu")


def test_gate_holds_one_set_of_inputs_and_two_outputs(probe, monkeypatch, tmp_path):
    problems, cands = folders(tmp_path, {"1_double.py": LEAN})
    r = run(monkeypatch, problems, cands, 1)
    assert r["status"] == "ok", r.get("message")
    # 3 gate seeds, the timed calls (compile call + 2 samples), the check after them
    assert len(probe.seen) == 7
    # The candidate runs first on every seed: its own inputs are the only
    # ones alive and the Model's output of that seed does not exist yet (so
    # no allocator can hand it to the candidate), in the gate, while timed
    # and in the check after the timed calls.
    assert all(s == (1, 0) for s in probe.seen), f"(live inputs, live Model outputs) per candidate call: {probe.seen}"
    # Nothing of a seed lives on when the next inputs are made: per seed the
    # candidate's inputs, then the Model's (its candidate's inputs dropped);
    # the timed inputs; after the timed calls the fresh seed's values (the
    # timed inputs alive, to be refilled with them), then the Model's own.
    assert probe.at_make == [(0, 0), (0, 0)] * 3 + [(0, 0), (1, 0), (0, 0)], probe.at_make


def test_compare_never_holds_a_float64_copy_of_a_whole_output(monkeypatch):
    # Two float64 copies of a 6.4 GB float32 output are 25.6 GB: the gate
    # compares a chunk at a time, with torch.allclose's verdict.
    import torch

    from xbench_candidates import gate

    monkeypatch.setattr(gate, "CHUNK", 100)
    sizes = []
    double = torch.Tensor.double
    monkeypatch.setattr(torch.Tensor, "double", lambda t: sizes.append(t.numel()) or double(t))
    x = torch.rand(64, 32)
    cases = [x + 1e-3, x + 0.5, x.t().contiguous().t(), x.clone().index_fill_(1, torch.tensor([3]), float("nan"))]
    inf = x.clone()
    inf[0, 0] = float("inf")
    cases.append(inf)
    for y in cases:
        ref = inf if y is inf else x
        ok, err, bad = gate.close(ref, y, 1e-2, 1e-2)
        assert ok == torch.allclose(y, ref, atol=1e-2, rtol=1e-2), (ok, err)
        # NaN is counted as non-finite; the reference's own infinity matched is not
        assert bad == (64 if y is cases[3] else 0), (bad, y is inf)
    assert sizes and max(sizes) <= 100, f"float64 copies of {max(sizes)} elements, the chunk is 100"


def test_after_an_oom_candidate_the_next_gates_and_times(probe, monkeypatch, tmp_path):
    problems, cands = folders(tmp_path, {"1_double.py": OOM, "2_double.py": LEAN})
    r = run(monkeypatch, problems, cands, 1)
    assert r["status"] == "oom" and "out of memory" in r["message"]
    assert all(ref() is None for ref in probe.inputs + probe.outputs), "the oom cell's tensors are still held"
    r = run(monkeypatch, problems, cands, 2)
    assert r["status"] == "ok", r.get("message")


def test_poison_takes_every_free_block_largest_first():
    # torch.cuda.memory_snapshot()'s shape: segments of blocks, each active
    # or free ("inactive"); only the free ones are filled, largest first so
    # the allocator's best fit hands back each block whole.
    from xbench_candidates import gate

    snap = [{"blocks": [{"size": 2 << 20, "state": "active_allocated"}, {"size": 512, "state": "inactive"}]},
            {"blocks": [{"size": 8 << 20, "state": "inactive"}, {"size": 0, "state": "inactive"}]},
            {"blocks": []}]
    assert gate.free_block_sizes(snap) == [8 << 20, 512]
    assert gate.free_block_sizes([]) == []


def test_poison_does_nothing_on_the_cpu():
    import torch

    from xbench_candidates import gate

    assert gate.poison_free_blocks(torch.device("cpu")) == 0


def test_refill_keeps_the_timed_tensors_or_replaces_them_when_shapes_differ():
    import torch

    from xbench_candidates import gate

    a, b = torch.zeros(3), torch.zeros(2, 2)
    xs = [a, b, 7]
    gate._refill(xs, [torch.ones(3), torch.full((2, 2), 2.0), 8])
    # the same tensor objects (a cache keyed by them answers stale), new values
    assert xs[0] is a and xs[1] is b and a.tolist() == [1.0] * 3 and b.sum().item() == 8.0 and xs[2] == 8
    fresh = [torch.ones(4), torch.ones(2, 2), 8]
    gate._refill(xs, fresh)
    assert xs[0] is fresh[0] and xs[0] is not a, "a shape that changed with the seed: the fresh inputs themselves"
