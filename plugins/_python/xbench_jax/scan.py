"""The scan workload in JAX (docs/workloads/scan.md): one jax.lax.scan over
the positions, vectorised over the batch, jitted.

The carry is a ring of the last K vectors u[s, c] = ⊕_c' (alpha[s, c'] +
transition[c', c]) (oldest first), from which alpha[t, c] = ⊕_d (u[t-d, c] +
cum[t, c] - cum[t-d, c] + duration_bias[d-1, c]) is one reduction: the spec's
double ⊕ with the transition factored out (exact: + distributes over
logsumexp and max). The cum rows t-K..t-1 are a dynamic_slice of cum padded
with K rows in front, rather than a second ring in the carry: cum is an
input already on the device, and a slice keeps the carry (what lax.scan
saves per step for the backward) to the u ring alone. Positions before 0
hold NEG, a large finite negative, so no inf - inf makes a NaN in a value or
a gradient. Rows finish at their own length (jnp.where captures alpha at
t = lengths[b]). Entropy carries the expectation semiring's second ring.

float32 only: float64 needs jax_enable_x64 process-wide (see backend.py).
Phases as in attention.py: forward is jit(f); backward is a jitted call
of the jax.vjp pullback made once in prepare; both is jit(vjp + pullback).
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from xbench_py import types as xt
from xbench_py import workloads as xw
from xbench_py import scan_ref
from xbench_jax.model import timed_step

NEG = -1.0e30


def _reduce(x, axis, semiring):
    return jnp.max(x, axis) if semiring == "max" else jax.nn.logsumexp(x, axis)


def scan(cum, trans, dur, lengths, K: int, semiring: str):
    """out [batch]; differentiable for log and max."""
    B, T1, C = cum.shape
    ent = semiring == "entropy"
    red = "log" if ent else semiring
    cum_pad = jnp.concatenate([jnp.zeros((B, K, C), cum.dtype), cum], 1)
    dur_rev = dur[::-1]
    u0 = jnp.broadcast_to(_reduce(trans, 0, red), (B, C))  # alpha[0] = 0
    ring = jnp.concatenate([jnp.full((B, K - 1, C), NEG, cum.dtype), u0[:, None]], 1)
    eu0 = jnp.broadcast_to((jax.nn.softmax(trans, 0) * trans).sum(0), (B, C))
    ering = jnp.concatenate([jnp.zeros((B, K - 1, C), cum.dtype), eu0[:, None]], 1)
    zero = jnp.zeros((B, C), cum.dtype)

    def body(carry, t):
        ring, ering, final, efinal = carry
        seg = (lax.dynamic_index_in_dim(cum, t, 1, keepdims=False)[:, None, :]
               - lax.dynamic_slice_in_dim(cum_pad, t, K, 1) + dur_rev)
        terms = ring + seg
        alpha = _reduce(terms, 1, red)
        tu = alpha[:, :, None] + trans
        u = _reduce(tu, 1, red)
        done = (lengths == t)[:, None]
        if ent:
            ea = (jax.nn.softmax(terms, 1) * (ering + seg)).sum(1)
            eu = (jax.nn.softmax(tu, 1) * (ea[:, :, None] + trans)).sum(1)
            ering = jnp.concatenate([ering[:, 1:], eu[:, None]], 1)
            efinal = jnp.where(done, ea, efinal)
        ring = jnp.concatenate([ring[:, 1:], u[:, None]], 1)
        return (ring, ering, jnp.where(done, alpha, final), efinal), None

    (_, _, final, efinal), _ = lax.scan(body, (ring, ering, zero, zero), jnp.arange(1, T1))
    out = _reduce(final, 1, red)
    if ent:
        out = out - (jax.nn.softmax(final, 1) * efinal).sum(1)
    return out


def _phase(cfg: xw.Scan, args: tuple) -> Callable[[], Any]:
    lengths = args[3]

    def f(cum, trans, dur):
        return scan(cum, trans, dur, lengths, cfg.K, cfg.semiring)

    def total(*x):
        return f(*x).sum()

    if cfg.phase == "forward":
        return timed_step(jax.jit(f), args[:3])
    if cfg.phase == "backward":
        out, pullback = jax.vjp(jax.jit(f), *args[:3])  # once, before timing
        backward = timed_step(jax.jit(lambda pb, g: pb(g)), (pullback, jnp.ones_like(out)))
        backward.out = out
        return backward
    both = jax.jit(lambda *x: (f(*x), *jax.grad(total, argnums=(0, 1, 2))(*x)))
    return timed_step(both, args[:3])


def _args(cfg: xw.Scan, device, arrays: dict) -> tuple:
    names = ("cum_scores", "transition", "duration_bias")
    x = tuple(jax.device_put(jnp.asarray(np.asarray(arrays[n]), jnp.float32), device) for n in names)
    return (*x, jax.device_put(jnp.asarray(np.asarray(arrays["lengths"]), jnp.int32), device))


def prepare(cfg: xw.Scan, device, seed: int) -> xt.Prepared:
    cfg.check()
    args = _args(cfg, device, scan_ref.fixtures(cfg, seed))
    # The carry is the u ring (lax.scan saves it at every position for the
    # backward); lengths are int32 here.
    return xt.Prepared(step=_phase(cfg, args), memory=cfg.counted_memory(cfg.streaming_state_rows(), lengths_item=4))


def export(cfg: xw.Scan, device, inputs: dict) -> dict:
    cfg.check()
    step = _phase(cfg, _args(cfg, device, inputs))
    res = step()
    if cfg.phase == "forward":
        res = (res,)
    elif cfg.phase == "backward":
        res = (step.out, *res)
    return {name: np.asarray(x, np.float32) for name, x in zip(cfg.outputs(), res)}
