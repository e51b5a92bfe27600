"""The attention workload in PyTorch (docs/workloads/attention.md).

q, out, dout [batch, heads, seq_len, head_dim]; k, v [batch, kv_heads, kv_len,
head_dim], query head h on kv head h // (heads // kv_heads); scale
1/sqrt(head_dim); causal only with kv_len = seq_len (the harness refuses the
rest), where torch's top-left is_causal is the spec's mask.

One function per variant computes out from q, k, v:
  ""              F.scaled_dot_product_attention, torch picking the kernel
  sdpa-flash      the same call inside sdpa_kernel(FLASH_ATTENTION)
  sdpa-efficient  ... EFFICIENT_ATTENTION (memory-efficient, CUDA only)
  sdpa-cudnn      ... CUDNN_ATTENTION (cuDNN's fused kernel, NVIDIA only):
                  what torch 2.11 picks by default on an H100 for bf16
                  (462 TFLOP/s at 4096 causal against 241 forced flash)
  sdpa-math       ... MATH (the composite reference implementation)
  naive           what a user writes: repeat_interleave for GQA, q @ kᵀ, a
                  float32 softmax, p @ v
  compile         torch.compile of the sdpa call (inductor, mode default)
GQA goes to sdpa as enable_gqa=True (no copy of k, v). A forced kernel that
torch cannot run for this device, dtype or shape raises "No available kernel"
at the call: that becomes xt.Unsupported with the reasons torch warns about,
so the harness records `unsupported`, not a failure. The kernel chosen for
the forward also runs the backward (autograd records the kernel's op), so the
variant names both.

Phases (the step): forward under inference_mode; backward is
torch.autograd.grad(out, (q, k, v), dout, retain_graph=True) on one graph
built in prepare, so only the backward is timed and the saved state is
reused; both builds the graph and takes the gradients in one call. Gradients
are returned, never accumulated into .grad, so each call does the same work.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from xbench_py import types as xt
from xbench_py import workloads as xw
from xbench_pytorch.model import torch_dtype

# The sdpa_kernel backend each forced variant selects.
FORCED = {"sdpa-flash": "FLASH_ATTENTION", "sdpa-efficient": "EFFICIENT_ATTENTION", "sdpa-cudnn": "CUDNN_ATTENTION",
          "sdpa-math": "MATH"}
VARIANTS = ("", *FORCED, "naive", "compile")
_COMPILED: dict = {}


def _sdpa(cfg: xw.Attention) -> Callable:
    gqa, causal, scale = cfg.group > 1, cfg.causal, cfg.scale

    def sdpa(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, enable_gqa=gqa)
    return sdpa


def _forced(cfg: xw.Attention, variant: str) -> Callable:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend, inner = getattr(SDPBackend, FORCED[variant]), _sdpa(cfg)

    def forced(q, k, v):
        with sdpa_kernel(backend):
            return inner(q, k, v)
    return forced


def _naive(cfg: xw.Attention) -> Callable:
    g, causal, scale = cfg.group, cfg.causal, cfg.scale

    def naive(q, k, v):
        if g > 1:
            k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
        s = (q @ k.transpose(-2, -1)).float() * scale
        if causal:
            keep = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril()
            s = s.masked_fill(~keep, float("-inf"))
        return torch.softmax(s, dim=-1).to(q.dtype) @ v
    return naive


def _compiled(cfg: xw.Attention) -> Callable:
    # One compiled function per (gqa, causal, scale): dynamo specialises it
    # per shape and dtype on its own, and keeping it across requests keeps
    # its cache, as a user's long-lived model would.
    key = (cfg.group > 1, cfg.causal, cfg.scale)
    if key not in _COMPILED:
        compiled = torch.compile(_sdpa(cfg), dynamic=False)

        # The backward phase takes the gradients of one forward graph again
        # and again (retain_graph=True), which a backward compiled with
        # donated buffers refuses ("non-empty donated buffers which requires
        # ... retain_graph=False"); dynamo compiles at the first call, so the
        # setting is scoped to the calls of this function.
        def f(q, k, v):
            with torch._functorch.config.patch(donated_buffer=False):
                return compiled(q, k, v)
        _COMPILED[key] = f
    return _COMPILED[key]


def function(cfg: xw.Attention, variant: str) -> Callable:
    """out = f(q, k, v) for the variant; ValueError for an unknown one."""
    if variant in ("", "sdpa"):
        f = _sdpa(cfg)
    elif variant in FORCED:
        f = _forced(cfg, variant)
    elif variant == "naive":
        f = _naive(cfg)
    elif variant == "compile":
        f = _compiled(cfg)
    else:
        raise ValueError(f"torch attention: unknown variant {variant!r} (known: {', '.join(v or 'sdpa' for v in VARIANTS)})")
    return _refusals(f, cfg, variant)


def _refusals(f: Callable, cfg: xw.Attention, variant: str) -> Callable:
    """f, turning torch's "no kernel for this call" into xt.Unsupported with
    the reasons torch gives. The reasons come as warnings, collected by a
    second call only after the first failed, so a timed call pays nothing."""
    def guarded(q, k, v):
        try:
            return f(q, k, v)
        except RuntimeError as e:
            if "No available kernel" not in str(e) and "No viable backend" not in str(e):
                raise
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    f(q, k, v)
                except RuntimeError:
                    pass
            why = "; ".join(dict.fromkeys(" ".join(str(w.message).split()) for w in caught)) or " ".join(str(e).split())
            raise xt.Unsupported(f"torch {torch.__version__} sdpa has no {FORCED.get(variant) or variant or 'default'} kernel for "
                                 f"{cfg.dtype} head_dim {cfg.head_dim} gqa {cfg.group > 1} on {q.device.type}: {why}") from None
    return guarded


def _tensors(cfg: xw.Attention, device: str, make: Callable[[str, tuple], torch.Tensor]) -> dict:
    """q, k, v (and dout when backward) in the dtype on the device; q, k, v
    require grad for the backward phases."""
    dt = torch_dtype(cfg.dtype)
    names = ("q", "k", "v", "dout") if cfg.backward else ("q", "k", "v")
    shapes = {"q": cfg.q_shape(), "k": cfg.k_shape(), "v": cfg.k_shape(), "dout": cfg.q_shape()}
    out = {n: make(n, shapes[n]).to(device=device, dtype=dt) for n in names}
    if cfg.backward:
        for n in ("q", "k", "v"):
            out[n].requires_grad_(True)
    return out


def _step(cfg: xw.Attention, f: Callable, t: dict) -> Callable[[], Any]:
    q, k, v = t["q"], t["k"], t["v"]
    if cfg.phase == "forward":
        @torch.inference_mode()
        def forward():
            return f(q, k, v)
        return forward
    if cfg.phase == "backward":
        out = f(q, k, v)  # the forward, once, before timing; its graph is reused by every call

        def backward():
            return torch.autograd.grad(out, (q, k, v), t["dout"], retain_graph=True)
        backward.out = out  # export reads it
        return backward

    def both():
        o = f(q, k, v)
        return (o, *torch.autograd.grad(o, (q, k, v), t["dout"]))
    return both


def prepare(cfg: xw.Attention, variant: str, device: str, seed: int, f: Callable | None = None) -> Callable[[], Any]:
    """Seeded normal inputs on the device; returns the phase's step. f, when
    given, is out = f(q, k, v) in place of the variant's (the triton backend
    passes its kernels; autograd gives the backward phases)."""
    cfg.check()
    gen = torch.Generator(device=device).manual_seed(seed)
    t = _tensors(cfg, device, lambda n, shape: torch.randn(shape, generator=gen, device=device))
    return _step(cfg, f or function(cfg, variant), t)


def export(cfg: xw.Attention, variant: str, device: str, inputs: dict, f: Callable | None = None) -> dict:
    """One call of the phase on the given float32 inputs; out (and dq, dk, dv
    for the backward phases) as float32 numpy arrays. f as in prepare."""
    cfg.check()
    t = _tensors(cfg, device, lambda n, shape: torch.from_numpy(np.ascontiguousarray(inputs[n], np.float32)))
    step = _step(cfg, f or function(cfg, variant), t)
    res = step()
    if cfg.phase == "forward":
        res = (res,)
    elif cfg.phase == "backward":
        res = (step.out, *res)
    return {name: x.detach().float().cpu().numpy() for name, x in zip(cfg.outputs(), res)}

