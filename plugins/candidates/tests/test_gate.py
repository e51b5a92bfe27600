"""The gate's comparison (xbench_candidates.gate.compare): each way an
output can be wrong is refused with its class first; strides alone are a
note, not a refusal."""

import pytest
import torch

from xbench_candidates import gate
from xbench_py import types as xt

X = torch.arange(12, dtype=torch.float32).reshape(3, 4)


class _Sub(torch.Tensor):
    pass


def _with(t, i, v):
    t = t.clone()
    t.view(-1)[i] = v
    return t


INF = _with(X, 0, float("inf"))

CASES = [
    ("same", X, X.clone(), ""),
    ("within tolerance", X, X + 1e-3, ""),
    ("equal infinities", INF, INF.clone(), ""),
    ("values", X, X + 1, "incorrect: max abs err 1"),
    ("shape", X, X[:2], "incorrect: output 0 has shape [2, 4], the Model's is [3, 4]"),
    ("count", (X, X), X, "incorrect: 1 output tensors, the Model returns 2"),
    ("dtype", X, X.half(), "wrong dtype: output 0 is torch.float16, the Model's is torch.float32"),
    ("device", X, torch.empty(3, 4, device="meta"), "wrong device: output 0 is on meta, the Model's on cpu"),
    ("layout", X, X.to_sparse(), "wrong layout: output 0 is torch.sparse_coo, the Model's is torch.strided"),
    ("subclass", X, X.clone().as_subclass(_Sub), "tensor subclass: output 0 is a "),
    ("NaN", X, _with(X, 5, float("nan")), "non-finite output: 1 NaN or infinite values in output 0"),
    ("NaN in both", _with(X, 5, float("nan")), _with(X, 5, float("nan")), "non-finite output: 1 NaN"),
    ("infinity where the Model is finite", X, _with(X, 0, float("-inf")), "non-finite output: 1 NaN"),
    ("second output", (X, X), (X, X.double()), "wrong dtype: output 1 is torch.float64"),
]


@pytest.mark.parametrize("name,ref,new,why", CASES, ids=[c[0] for c in CASES])
def test_compare_refuses_by_class(name, ref, new, why):
    _, got, _ = gate.compare(ref, new, 1e-2, 1e-2)
    assert got.startswith(why) if why else got == "", got


def test_strides_are_a_note_not_a_refusal():
    err, why, notes = gate.compare(X.t().contiguous(), X.t(), 1e-2, 1e-2)
    assert why == "" and err == 0.0
    assert notes == ["output 0 has strides [1, 4], the Model's [3, 1]"]


def test_reuse_check_refuses_a_result_handed_back_and_passes_a_rewritten_buffer():
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    # a cache: the same tensor handed back, never written again
    cached, check = a @ b, gate.ReuseCheck()
    check.check(cached, [a, b], "of the first call")
    assert torch.isnan(cached).all(), "the output is poisoned after the call"
    with pytest.raises(xt.Failed, match="^result reuse: output 0 of a timed call"):
        check.check(cached, [a, b], "of a timed call")
    # a kept output buffer written again by every call (out=): not a reuse
    buf, check = torch.empty(4, 4), gate.ReuseCheck()
    for _ in range(3):
        torch.matmul(a, b, out=buf)
        check.check(buf, [a, b], "of a timed call")
    # an output that is one of the inputs (an in-place Model's answer) is left as it is
    check = gate.ReuseCheck()
    check.check(a, [a, b], "of the first call")
    assert torch.isfinite(a).all()
    # integer outputs cannot hold NaN: never poisoned, never refused
    idx, check = torch.arange(4), gate.ReuseCheck()
    check.check(idx, [a, b], "of the first call")
    check.check(idx, [a, b], "of a timed call")
    assert idx.tolist() == [0, 1, 2, 3]
