"""The TTT inner-loop kernels' shapes, launch settings and sm_90 build:
which sizes are refused, how the XBENCH_TRITON_* overrides reach a launch,
and that every kernel compiles for an H100 without spilling registers.
(Their numbers against pytorch's inner loop are in test_triton.py.)"""

import re

import pytest
import torch


@pytest.mark.parametrize("head_dim,mini_batch,word", [
    (64, 16, None),  # 125m
    (96, 16, None),  # 760m: padded to 128 inside the kernels
    (33, 32, None),
    (1, 16, None),
    (0, 16, "head_dim"),
    (64, 8, "mini-batch"),  # the M dimension of every tl.dot: >= 16
    (64, 24, "mini-batch"),  # a tl.arange: a power of two
])
def test_check_shapes(head_dim, mini_batch, word):
    from xbench_triton import model

    why = model.check_shapes(head_dim, mini_batch)
    if word is None:
        assert why is None, why
    else:
        assert why is not None and word in why


@pytest.mark.parametrize("env,f,hidden,dtype,want", [
    # float32 at f <= 64: the H100 sweep's fastest; above, and bfloat16, the spill-free default
    ({}, 64, 256, torch.float32, (4, 64, 32, 1, 4)),
    ({}, 96, 384, torch.float32, (8, 32, 32, 1, 4)),
    ({}, 64, 256, torch.bfloat16, (8, 32, 32, 1, 4)),
    ({"XBENCH_TRITON_WARPS": "8", "XBENCH_TRITON_HB": "32", "XBENCH_TRITON_BF": "16",
      "XBENCH_TRITON_STAGES": "2", "XBENCH_TRITON_OUT_WARPS": "8"}, 64, 256, torch.float32, (8, 32, 16, 2, 8)),
    ({"XBENCH_TRITON_HB": "512", "XBENCH_TRITON_BF": "256"}, 96, 384, torch.float32, (8, 512, 128, 1, 4)),  # at most pow2(4f), FP
    ({"XBENCH_TRITON_HB": "128", "XBENCH_TRITON_BF": "64"}, 16, 64, torch.float32, (4, 64, 16, 1, 4)),  # tiny
    ({"XBENCH_TRITON_HB": "40"}, 64, 256, torch.float32, (4, 64, 32, 1, 4)),  # rounded up to a power of two
])
def test_mlp_launch_overrides(monkeypatch, env, f, hidden, dtype, want):
    from xbench_triton import ttt_mlp

    for name in ("WARPS", "HB", "BF", "STAGES", "OUT_WARPS"):
        monkeypatch.delenv(f"XBENCH_TRITON_{name}", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert ttt_mlp.mlp_launch(dtype, ttt_mlp.pow2_at_least_16(f), hidden) == want


def test_spill_allowance_is_the_measured_default_only(monkeypatch):
    from xbench_triton import ttt_mlp as t

    for name in ("WARPS", "HB", "BF", "STAGES", "OUT_WARPS"):
        monkeypatch.delenv(f"XBENCH_TRITON_{name}", raising=False)
    assert t.spill_allowance("mlp chain", torch.float32, 64) == t.KNOWN_SPILL_BYTES
    assert t.spill_allowance("mlp chain", torch.float32, 128) == 0
    assert t.spill_allowance("mlp chain", torch.bfloat16, 64) == 0
    assert t.spill_allowance("linear chain", torch.float32, 64) == 0
    monkeypatch.setenv("XBENCH_TRITON_HB", "32")
    assert t.spill_allowance("mlp chain", torch.float32, 64) == 0


def test_linear_launch_keeps_the_h100_settings(monkeypatch):
    # (4 warps, BC 32, 2 stages) is the measured fastest at f=64; padding to
    # 128 (f=96) keeps BC, and a small f clamps it to the padded width.
    from xbench_triton import model

    for name in ("WARPS", "BC", "STAGES", "OUT_WARPS"):
        monkeypatch.delenv(f"XBENCH_TRITON_{name}", raising=False)
    assert model.linear_launch(torch.float32, 64) == (4, 32, 2, 4)
    assert model.linear_launch(torch.bfloat16, 128) == (4, 32, 2, 4)
    assert model.linear_launch(torch.float32, 16) == (4, 16, 2, 4)


def test_kernels_compile_for_sm90_without_spills():
    # The interpreter runs code the compiler refuses and says nothing about
    # registers: compile for real, in a process without TRITON_INTERPRET.
    from conftest import run_compile_check

    r = run_compile_check("ttt_compile_check.py")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("f")]
    # 4 kernels x float32, bfloat16 x f=64, f=96; no spill but the one measured
    # and allowed (ttt_mlp.spill_allowance): the float32 mlp chain at f=64
    known = [ln for ln in lines if ln.startswith("f64 fp32 mlp chain")]
    assert len(lines) == 16 and len(known) == 1, r.stdout
    assert all("spill stores 0 B" in ln for ln in lines if ln not in known), r.stdout
    from xbench_triton import ttt_mlp

    stores = int(re.search(r"spill stores (\d+) B", known[0]).group(1))
    assert stores <= ttt_mlp.KNOWN_SPILL_BYTES, known[0]
