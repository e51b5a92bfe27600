"""The mamba backbone in model.py: the causal conv against the spec's formula
(NumPy, float64), the backbone flag changes the model and each backbone reads
exactly its own weights, causality through the convs, gradients for every
parameter, and bfloat16 against float64."""

import numpy as np
import pytest
import torch

from xbench_pytorch import model as m
from xbench_py import types as xt
from xbench_py import spec as xs

SIZE = xs.model_size("tiny")
K = 16


def conv_by_definition(x, w, b):
    """y[n, t, c] = b[c] + sum_k w[c, k] x[n, t-3+k, c], x = 0 before each sequence starts."""
    N, L, C = x.shape
    y = np.empty_like(x)
    for n in range(N):
        for t in range(L):
            for c in range(C):
                y[n, t, c] = b[c] + sum(w[c, k] * x[n, t - 3 + k, c] for k in range(4) if t - 3 + k >= 0)
    return y


def conv_case(seed=0, N=2, L=9, C=5):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((N, L, C)), rng.standard_normal((C, 4)), rng.standard_normal(C)


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-12), (torch.float32, 1e-6), (torch.bfloat16, 2e-2)],
                         ids=["float64", "float32", "bfloat16"])
def test_conv_matches_definition(dtype, tol):
    x, w, b = conv_case()
    want = conv_by_definition(x, w, b)
    got = m.causal_conv(*(torch.from_numpy(a).to(dtype) for a in (x, w, b)))
    assert got.dtype == dtype and got.shape == x.shape  # activations stay in their dtype
    err = np.abs(got.double().numpy() - want).max() / np.abs(want).max()
    assert err < tol, err


def test_conv_does_not_reach_across_sequences():
    # The second sequence's first rows must see zeros before it, not the
    # first sequence's tail (a conv over the flattened [B*L, C] would).
    x, w, b = conv_case(seed=1)
    x[0, -3:] = 1e3
    got = m.causal_conv(*(torch.from_numpy(a) for a in (x, w, b))).numpy()
    np.testing.assert_allclose(got[1], conv_by_definition(x[1:], w, b)[0], rtol=1e-12, atol=1e-12)


def params(ttt_type, backbone, dtype=torch.float64):
    return {k: torch.from_numpy(v).to(dtype) for k, v in
            xs.perturbed_params(xs.param_specs(SIZE, ttt_type, K, backbone), seed=3).items()}


def tokens(L=48, seed=2):
    return torch.randint(0, SIZE.vocab, (2, L), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("ttt_type", ["linear", "mlp"])
def test_backbone_flag_changes_the_model(ttt_type):
    # Both backbones' weights in one dict: each backbone must read its own, so
    # a flag that is ignored (or a piece of mamba left out) shows up as equal
    # logits or as a gradient where there should be none.
    p = {**params(ttt_type, "transformer"), **params(ttt_type, "mamba")}
    for t in p.values():
        t.requires_grad_(True)
    tok = tokens()
    logits = {}
    for backbone in xt.BACKBONES:
        out = m.forward(p, tok, SIZE, ttt_type, K, backbone=backbone)
        used = {s.name for s in xs.param_specs(SIZE, ttt_type, K, backbone)}
        grads = torch.autograd.grad(out.square().sum(), list(p.values()), allow_unused=True)
        for name, g in zip(p, grads):
            reached = g is not None and bool(g.abs().max() > 0)
            assert reached == (name in used), (backbone, name)
        logits[backbone] = out.detach()
    a, b = logits["mamba"], logits["transformer"]
    assert (a - b).norm() / b.norm() > 0.1


def test_unknown_backbone_is_refused():
    with pytest.raises(ValueError, match="backbone 'hybrid'"):
        m.forward(params("linear", "mamba"), tokens(16), SIZE, "linear", K, backbone="hybrid")


@pytest.mark.parametrize("ttt_type", ["linear", "mlp"])
def test_mamba_is_causal(ttt_type):
    # Three convs per layer: one that looked ahead (symmetric padding, or the
    # wrong end of the padded output kept) would move logits before t.
    p, tok = params(ttt_type, "mamba"), tokens()
    changed = tok.clone()
    changed[:, 20] = (changed[:, 20] + 1) % SIZE.vocab
    a, b = (m.forward(p, t, SIZE, ttt_type, K, backbone="mamba") for t in (tok, changed))
    torch.testing.assert_close(a[:, :20], b[:, :20], rtol=0, atol=1e-12)
    assert (a[:, 20:] - b[:, 20:]).abs().max() > 1e-6


def test_mamba_bfloat16_close_to_float64():
    tok = tokens(32)
    ref = m.forward(params("linear", "mamba"), tok, SIZE, "linear", K, backbone="mamba")
    got = m.forward(params("linear", "mamba", torch.bfloat16), tok, SIZE, "linear", K, backbone="mamba")
    assert got.dtype == torch.bfloat16
    err = (got.double() - ref).norm() / ref.norm()
    assert err < 5e-2, err
