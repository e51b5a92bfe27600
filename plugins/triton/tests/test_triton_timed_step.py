"""The timed call of the triton backend is its kernel launch alone (issue
31): around the launch, the wrapper only allocates outputs; it converts,
casts and copies nothing. The kernels are replaced by a recording stub here
(Triton's CPU interpreter copies tensors itself, which would hide the
wrapper's ops among its own); what the stub records is the wrapper's work."""

import collections

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from xbench_triton import attention
from xbench_triton import backend
from xbench_triton import gemm
from xbench_triton import scan
from xbench_py import types as xt
from xbench_py import workloads as xw

CPU = xt.Device("cpu", "cpu", count=1)
ALLOCATIONS = {"aten::empty", "aten::empty_like", "aten::empty_strided", "aten::zeros", "aten::zeros_like",
               "aten::zero_", "aten::fill_"}


class Stub:
    """kernel[grid](*args, **meta) records the tensors it was given."""

    def __init__(self):
        self.launches = []

    def __getitem__(self, grid):
        return lambda *args, **meta: self.launches.append([a for a in args if isinstance(a, torch.Tensor)])


def wrapper_ops(monkeypatch, module, kernel: str, step) -> tuple:
    stub = Stub()
    monkeypatch.setattr(module, kernel, stub)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    names = collections.Counter(e.name for e in prof.events() if e.name.startswith("aten::"))
    return names, stub.launches


@pytest.mark.parametrize("layout", ["nn", "tt"])
def test_gemm_launch_alone(monkeypatch, layout):
    step = backend.Backend().prepare_gemm(xw.Gemm(m=16, n=16, k=16, layout=layout), "", CPU, 0).step
    ops, launches = wrapper_ops(monkeypatch, gemm, "_gemm_plain", step)
    assert not ops, ops  # the output was allocated in prepare; the 't' operand is a view made there
    assert len(launches) == 1
    a, b = launches[0][:2]
    assert (a.stride(-1) == 1) == (layout[0] == "n")  # the stored layout reaches the kernel as strides


def test_attention_forward_launch_alone(monkeypatch):
    cfg = xw.Attention(batch=1, heads=2, kv_heads=2, seq_len=16, head_dim=16, causal=True, dtype="float32")
    step = backend.Backend().prepare_attention(cfg, "", CPU, 0).step
    ops, launches = wrapper_ops(monkeypatch, attention, "_fwd_kernel", step)
    assert set(ops) <= ALLOCATIONS, ops  # out and lse
    assert len(launches) == 1 and launches[0][0].shape == cfg.q_shape()  # BHSD, the kernel's layout


def test_scan_forward_launch_alone(monkeypatch):
    step = backend.Backend().prepare_scan(xw.Scan(T=8, K=4, C=4, batch=2), "", CPU, 0).step
    ops, launches = wrapper_ops(monkeypatch, scan, "_scan_fwd", step)
    assert set(ops) <= ALLOCATIONS, ops
    assert len(launches) == 1 and launches[0][0].dtype == torch.float32
