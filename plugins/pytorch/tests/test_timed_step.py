"""The timed call of the pytorch backend is the operation alone (issue 31):
no layout conversion, dtype cast or copy of the inputs around the op. Read
from torch.profiler's op list of one step on the CPU: the step's top-level
ops (those no other op called) are the operation itself."""

import collections

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from xbench_pytorch import backend
from xbench_py import types as xt
from xbench_py import workloads as xw

CPU = xt.Device("cpu", "cpu", count=1)
# What a conversion before or after the op would show as, at the top level.
CONVERSIONS = {"aten::_to_copy", "aten::copy_", "aten::clone", "aten::contiguous", "aten::transpose",
               "aten::permute", "aten::t", "aten::numpy_T", "aten::mT", "aten::swapaxes"}


def top_level_ops(step) -> collections.Counter:
    step()  # not the first call: lazy initialisation is not the timed call
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    return collections.Counter(e.name for e in prof.events() if e.cpu_parent is None and e.name.startswith("aten::"))


@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gemm_step_is_one_matmul(layout, dtype):
    step = backend.Backend().prepare_gemm(xw.Gemm(m=8, n=16, k=32, batch=2, layout=layout, dtype=dtype), "", CPU, 0).step
    # 't' operands are transposed views made in prepare: the op reads the strides.
    assert top_level_ops(step) == collections.Counter({"aten::matmul": 1})


def test_attention_step_is_one_sdpa():
    cfg = xw.Attention(batch=1, heads=4, kv_heads=2, seq_len=16, head_dim=8, causal=True, dtype="float32")
    step = backend.Backend().prepare_attention(cfg, "", CPU, 0).step
    # sdpa's layout is the spec's BHSD: nothing to convert.
    assert top_level_ops(step) == collections.Counter({"aten::scaled_dot_product_attention": 1})


@pytest.mark.parametrize("phase", ["forward", "backward", "both"])
def test_scan_step_converts_nothing(phase):
    step = backend.Backend().prepare_scan(xw.Scan(T=8, K=4, C=4, batch=2, phase=phase), "", CPU, 0).step
    ops = top_level_ops(step)
    assert not CONVERSIONS & set(ops), ops


def test_the_check_sees_a_conversion():
    a = torch.randn(8, 8)
    ops = top_level_ops(lambda: torch.matmul(a.t().contiguous().to(torch.float64), a.double()))
    assert {"aten::contiguous", "aten::to"} <= set(ops) and CONVERSIONS & set(ops)
