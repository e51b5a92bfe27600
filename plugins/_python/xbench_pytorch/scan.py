"""The scan workload in PyTorch (docs/workloads/scan.md): our own streaming
semi-Markov CRF scan, and the phase machinery the flash-semicrf and triton
backends reuse with their own forward.

The scan keeps O(K·C) state a sequence: a ring of the last K vectors

    u[s, c] = ⊕_c' (alpha[s, c'] + transition[c', c])

(⊕ = logsumexp for log, max for max), from which

    alpha[t, c] = ⊕_{d=1..K} (u[t-d, c] + cum[t, c] - cum[t-d, c] + duration_bias[d-1, c])

is one reduction over the ring: the spec's double ⊕ over (d, c') with the
transition factored out, exact because + distributes over both. Positions
before 0 hold u = -inf, so every step has the same shapes (the first K
steps included): one torch.compile graph serves the whole loop. The loop over
t is Python, one step of a few kernels each, as a user's streaming
reference is; rows finish at their own length (torch.where captures alpha at
t = lengths[b]). Entropy carries the expectation semiring's second value
beside alpha and u.

Phases: forward under inference_mode; backward is torch.autograd.grad of
sum(out) on one graph built in prepare (the forward is not timed); both
builds the graph and takes the gradients in one call.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from xbench_py import types as xt
from xbench_py import workloads as xw
from xbench_py import scan_ref
from xbench_pytorch.model import torch_dtype

_COMPILED: dict = {}

# forward(cum, trans, dur, lengths, cfg) -> out [batch]: the scan of one backend.
Forward = Callable[..., torch.Tensor]


def _reduce(x: torch.Tensor, dim: int, semiring: str) -> torch.Tensor:
    return x.amax(dim) if semiring == "max" else torch.logsumexp(x, dim)


def _step(ring, cum_win, cum_t, dur_rev, trans, semiring: str):
    """One position: alpha_t [B, C] from the ring of u [B, K, C] (oldest
    first), then u_t [B, C]. cum_win are cum rows t-K..t-1, dur_rev the
    duration bias for d = K..1."""
    alpha = _reduce(ring + (cum_t[:, None, :] - cum_win + dur_rev), 1, semiring)
    u = _reduce(alpha[:, :, None] + trans, 1, semiring)
    return alpha, u


def _entropy_step(ring, ering, cum_win, cum_t, dur_rev, trans):
    """_step for entropy: also the expectations E[alpha_t] and E[u_t]."""
    seg = cum_t[:, None, :] - cum_win + dur_rev
    terms = ring + seg
    w = torch.softmax(terms, 1)  # 0 where the ring is -inf (before position 0), where ering is 0: no NaN
    alpha = torch.logsumexp(terms, 1)
    ea = (w * (ering + seg)).sum(1)
    terms_u = alpha[:, :, None] + trans
    u = torch.logsumexp(terms_u, 1)
    eu = (torch.softmax(terms_u, 1) * (ea[:, :, None] + trans)).sum(1)
    return alpha, u, ea, eu


def streaming(cum, trans, dur, lengths, cfg: xw.Scan, compiled: bool = False) -> torch.Tensor:
    """out [batch] of the streaming scan; differentiable for log and max."""
    B, C, K = cum.shape[0], cfg.C, cfg.K
    ent = cfg.semiring == "entropy"
    step = _compiled(cfg.semiring, ent) if compiled else (
        _entropy_step if ent else (lambda *a: _step(*a, cfg.semiring)))
    neg = torch.full((B, K, C), float("-inf"), dtype=cum.dtype, device=cum.device)
    # cum rows padded with K zero rows in front, so cum_pad[:, t:t+K] are rows t-K..t-1
    cum_pad = torch.cat([torch.zeros((B, K, C), dtype=cum.dtype, device=cum.device), cum], 1)
    dur_rev = dur.flip(0)
    u0 = _reduce(trans, 0, "log" if ent else cfg.semiring).expand(B, C)  # alpha[0] = 0
    ring = torch.cat([neg[:, 1:], u0[:, None]], 1)
    ering = torch.zeros_like(ring) if ent else None
    if ent:
        eu0 = (torch.softmax(trans, 0) * trans).sum(0).expand(B, C)
        ering = torch.cat([ering[:, 1:], eu0[:, None]], 1)
    final = torch.zeros((B, C), dtype=cum.dtype, device=cum.device)
    efinal = torch.zeros_like(final) if ent else None
    last = lengths.to(cum.device)
    for t in range(1, int(lengths.max()) + 1):
        if ent:
            alpha, u, ea, eu = step(ring, ering, cum_pad[:, t:t + K], cum[:, t], dur_rev, trans)
            ering = torch.cat([ering[:, 1:], eu[:, None]], 1)
        else:
            alpha, u = step(ring, cum_pad[:, t:t + K], cum[:, t], dur_rev, trans)
        ring = torch.cat([ring[:, 1:], u[:, None]], 1)
        done = (last == t)[:, None]
        final = torch.where(done, alpha, final)
        if ent:
            efinal = torch.where(done, ea, efinal)
    out = _reduce(final, 1, "log" if ent else cfg.semiring)
    if ent:
        out = out - (torch.softmax(final, 1) * efinal).sum(1)
    return out


def _compiled(semiring: str, entropy: bool):
    # One compiled step per semiring, kept across requests (dynamo
    # specialises it per shape and dtype itself), as a user's model keeps it.
    key = "entropy" if entropy else semiring
    if key not in _COMPILED:
        if entropy:
            _COMPILED[key] = torch.compile(_entropy_step, dynamic=False)
        else:
            _COMPILED[key] = torch.compile(lambda *a: _step(*a, semiring), dynamic=False)
    return _COMPILED[key]


def forward_fn(variant: str) -> Forward:
    """The pytorch backend's forward for a variant ("" or "compile")."""
    if variant not in ("", "compile"):
        raise ValueError(f"torch scan: unknown variant {variant!r} (known: default, compile)")
    compiled = variant == "compile"
    return lambda cum, trans, dur, lengths, cfg: streaming(cum, trans, dur, lengths, cfg, compiled)


def _tensors(cfg: xw.Scan, device: str, arrays: dict) -> dict:
    dt = torch_dtype(cfg.dtype)
    t = {n: torch.as_tensor(np.ascontiguousarray(arrays[n])).to(device=device, dtype=dt)
         for n in ("cum_scores", "transition", "duration_bias")}
    t["lengths"] = torch.as_tensor(np.asarray(arrays["lengths"], np.int64)).to(device)
    if cfg.backward:
        for n in ("cum_scores", "transition", "duration_bias"):
            t[n].requires_grad_(True)
    return t


def _phase(cfg: xw.Scan, f: Forward, t: dict) -> Callable:
    args = (t["cum_scores"], t["transition"], t["duration_bias"], t["lengths"], cfg)
    wrt = (t["cum_scores"], t["transition"], t["duration_bias"])
    if cfg.phase == "forward":
        @torch.inference_mode()
        def forward():
            return f(*args)
        return forward
    if cfg.phase == "backward":
        out = f(*args)  # once, before timing; every call reuses its graph

        def backward():
            return torch.autograd.grad(out.sum(), wrt, retain_graph=True)
        backward.out = out
        return backward

    def both():
        out = f(*args)
        return (out, *torch.autograd.grad(out.sum(), wrt))
    return both


def prepare(cfg: xw.Scan, device: str, seed: int, f: Forward, state_rows: int) -> xt.Prepared:
    """Seeded inputs of the spec's shapes and fixture lengths on the device;
    the phase's step over f. state_rows as in xw.Scan.counted_memory()."""
    cfg.check()
    t = _tensors(cfg, device, scan_ref.fixtures(cfg, seed))
    return xt.Prepared(step=_phase(cfg, f, t), memory=cfg.counted_memory(state_rows))


def export(cfg: xw.Scan, device: str, inputs: dict, f: Forward) -> dict:
    """One call of the phase on the given inputs; out (and the gradients for
    the backward phases) as numpy arrays in the config's dtype."""
    cfg.check()
    step = _phase(cfg, f, _tensors(cfg, device, inputs))
    res = step()
    if cfg.phase == "forward":
        res = (res,)
    elif cfg.phase == "backward":
        res = (step.out, *res)
    return {name: x.detach().cpu().numpy() for name, x in zip(cfg.outputs(), res)}
