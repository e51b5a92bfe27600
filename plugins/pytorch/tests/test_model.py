"""model.py against the spec: the dual form against a naive per-token primal
form (with G taken by autograd, so step 5's closed form is checked too), RoPE
against the spec's formula, causality, and finite gradients."""

import math

import pytest
import torch
import torch.nn.functional as F

from xbench_pytorch import model as m
from xbench_py import spec as xs



@pytest.fixture(autouse=True)
def float64_default():
    """These checks compare in float64; set it per test and restore it, so
    other test modules (collected in the same process) keep float32."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


def layer_norm(z, w, b, eps=xs.EPS):
    mu = z.mean(-1, keepdim=True)
    var = ((z - mu) ** 2).mean(-1, keepdim=True)
    return (z - mu) / torch.sqrt(var + eps) * w + b


def perturbed_inner(ttt_type, nh, f, K, gen):
    hid = 4 * f if ttt_type == "mlp" else f
    def r(*shape, s=1.0):
        return torch.randn(*shape, generator=gen) * s
    p = {"W1": r(nh, f, hid, s=0.3), "b1": r(nh, hid, s=0.1), "ln_w": 1 + r(nh, f, s=0.1), "ln_b": r(nh, f, s=0.1),
         "tok_delta": r(K, s=0.05)}
    if ttt_type == "mlp":
        p.update(W2=r(nh, hid, f, s=0.3), b2=r(nh, f, s=0.1))
    return p


def naive_inner(xq, xk, xv, gate, p, ttt_type, K):
    """Spec, token by token: every token i of a mini-batch sees the weights
    after the updates of tokens j <= i, with gradients G taken at the
    mini-batch's starting weights."""
    B, nh, L, f = xq.shape
    out = torch.empty_like(xq)
    lr = xs.BASE_LR[ttt_type]
    for b in range(B):
        for h in range(nh):
            lw, lb = p["ln_w"][h], p["ln_b"][h]
            W1, b1 = p["W1"][h].clone(), p["b1"][h].clone()
            if ttt_type == "mlp":
                W2, b2 = p["W2"][h].clone(), p["b2"][h].clone()
            for n in range(L // K):
                rows = range(n * K, (n + 1) * K)
                grads = []
                for t in rows:
                    kx, tgt = xk[b, h, t], xv[b, h, t] - xk[b, h, t]
                    z1 = (kx @ W1 + b1).requires_grad_(True)
                    if ttt_type == "linear":
                        loss = 0.5 * ((layer_norm(z1, lw, lb) - tgt) ** 2).sum()
                        grads.append((kx, torch.autograd.grad(loss, z1)[0]))
                    else:
                        x2 = F.gelu(z1, approximate="tanh")
                        z2 = x2 @ W2 + b2
                        loss = 0.5 * ((layer_norm(z2, lw, lb) - tgt) ** 2).sum()
                        g1, g2 = torch.autograd.grad(loss, (z1, z2))
                        grads.append((kx, g1, x2.detach(), g2))
                for i, t in enumerate(rows):
                    tok = max(0.0, 1.0 / (i + 1) + float(p["tok_delta"][i]))
                    eta = [lr * tok * float(gate[b, h, n * K + j]) / f for j in range(i + 1)]
                    Wi = W1 - sum(e * torch.outer(g[0], g[1]) for e, g in zip(eta, grads))
                    bi = b1 - sum(e * g[1] for e, g in zip(eta, grads))
                    z = xq[b, h, t] @ Wi + bi
                    if ttt_type == "mlp":
                        W2i = W2 - sum(e * torch.outer(g[2], g[3]) for e, g in zip(eta, grads))
                        b2i = b2 - sum(e * g[3] for e, g in zip(eta, grads))
                        z = F.gelu(z, approximate="tanh") @ W2i + b2i
                    out[b, h, t] = xq[b, h, t] + layer_norm(z, lw, lb)
                W1, b1 = Wi.detach(), bi.detach()  # the last token's weights carry over
                if ttt_type == "mlp":
                    W2, b2 = W2i.detach(), b2i.detach()
    return out


@pytest.mark.parametrize("ttt_type", ["linear", "mlp"])
def test_dual_matches_naive_primal(ttt_type):
    gen = torch.Generator().manual_seed(0)
    B, nh, L, f, K = 2, 2, 24, 8, 8
    xq, xk, xv = (torch.randn(B, nh, L, f, generator=gen) * 0.5 for _ in range(3))
    gate = torch.sigmoid(torch.randn(B, nh, L, generator=gen))
    p = perturbed_inner(ttt_type, nh, f, K, gen)
    got = m.ttt_inner(xq, xk, xv, gate, p, ttt_type, K)
    want = naive_inner(xq, xk, xv, gate, p, ttt_type, K)
    torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-9)


def test_rope_matches_spec_formula():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(1, 1, 12, 6, generator=gen)
    K, f = 4, 6
    want = torch.empty_like(x)
    for t in range(12):
        pos = t % K
        for i in range(f // 2):
            w = xs.ROPE_THETA ** (-2 * i / f)
            c, s = math.cos(pos * w), math.sin(pos * w)
            want[0, 0, t, i] = x[0, 0, t, i] * c - x[0, 0, t, i + 3] * s
            want[0, 0, t, i + 3] = x[0, 0, t, i + 3] * c + x[0, 0, t, i] * s
    torch.testing.assert_close(m.rope(x, K), want, rtol=1e-12, atol=1e-12)


def full_params(ttt_type, seed=0):
    size = xs.model_size("tiny")
    specs = xs.param_specs(size, ttt_type, 16)
    w = xs.init_params(specs, seed)
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for s in specs:  # move every tensor off its initial value, as a verification run must
        t = torch.from_numpy(w[s.name]).double()
        out[s.name] = t + 0.05 * torch.randn(t.shape, generator=gen)
    return size, out


@pytest.mark.parametrize("ttt_type", ["linear", "mlp"])
def test_causal(ttt_type):
    size, p = full_params(ttt_type)
    tokens = torch.randint(0, size.vocab, (1, 48), generator=torch.Generator().manual_seed(2))
    changed = tokens.clone()
    changed[0, 20] = (changed[0, 20] + 1) % size.vocab
    a, b = (m.forward(p, t, size, ttt_type, 16) for t in (tokens, changed))
    torch.testing.assert_close(a[:, :20], b[:, :20], rtol=0, atol=1e-12)
    assert (a[:, 20:] - b[:, 20:]).abs().max() > 1e-6


@pytest.mark.parametrize("ttt_type", ["linear", "mlp"])
def test_backward_finite_gradient_for_every_parameter(ttt_type):
    size, p = full_params(ttt_type)
    for t in p.values():
        t.requires_grad_(True)
    tokens = torch.randint(0, size.vocab, (2, 32), generator=torch.Generator().manual_seed(3))
    loss, grads = m.forward_backward(p, tokens, size, ttt_type, 16)
    assert torch.isfinite(loss) and set(grads) == set(p)
    for name, g in grads.items():
        assert g.shape == p[name].shape and torch.isfinite(g).all(), name
        assert g.abs().max() > 0, f"{name} gets no gradient"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_low_precision_close_to_float64(dtype):
    size, p = full_params("linear")
    tokens = torch.randint(0, size.vocab, (1, 32), generator=torch.Generator().manual_seed(4))
    ref = m.forward(p, tokens, size, "linear", 16)
    got = m.forward({k: v.to(dtype) for k, v in p.items()}, tokens, size, "linear", 16)
    assert got.dtype == dtype
    err = (got.double() - ref).abs().max() / ref.abs().max()
    assert err < (1e-5 if dtype == torch.float32 else 5e-2), err
