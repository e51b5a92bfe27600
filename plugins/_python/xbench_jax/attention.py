"""The attention workload in JAX (docs/workloads/attention.md).

q, out, dout [batch, heads, seq_len, head_dim]; k, v [batch, kv_heads, kv_len,
head_dim], query head h on kv head h // (heads // kv_heads); scale
1/sqrt(head_dim); causal only with kv_len = seq_len (the harness refuses the
rest), where JAX's top-left is_causal is the spec's mask.

The call is jax.nn.dot_product_attention, whose layout is [batch, seq, heads,
head_dim] ("BTNH", JAX's native one): prepare() makes the inputs in the
spec's BHSD layout and converts them to BTNH once, before any timed call, so
the timed function is the attention alone (no transpose of q, k, v or out in
it: a layout conversion is not the work the spec defines; inside the call,
XLA did not fold the four transposes into cuDNN's kernel, issue 31). export() converts its BHSD inputs the same way and
its outputs back, outside the call. GQA is native (fewer key heads, the same
grouping as the spec). The variant picks `implementation`: "" lets JAX choose (None), "xla"
the XLA composition (float32 logits and softmax, probabilities cast to the
dtype before p·v), "cudnn" cuDNN's fused kernel (NVIDIA GPUs, bfloat16 and
float16); a refusal at trace time (cuDNN's, or XLA:CPU's for float16)
becomes xt.Unsupported with JAX's reason.

float32 is IEEE: the function is traced under default_matmul_precision
("highest"), or a GPU would run its dots in TF32 (the 16-bit dtypes keep
JAX's default, float32 accumulation). Phases: forward is a jitted
f(q, k, v); backward is a jitted call of the jax.vjp function, whose
residuals are computed once in prepare (outside every sample); both jits
jax.vjp and the pullback together.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from xbench_py import types as xt
from xbench_py import workloads as xw
from xbench_jax.model import jax_dtype, timed_step
from xbench_py import dtypes as xd

IMPLEMENTATIONS = {"": None, "xla": "xla", "cudnn": "cudnn"}


def precision(dtype: str) -> str | None:
    """The default_matmul_precision the attention is traced under. Only the
    IEEE dtypes (float32) need one: "highest" keeps a GPU from running its
    dots in TF32. The 16-bit dtypes keep JAX's own (None: float32
    accumulation); naming "default" there makes XLA:CPU refuse float16 dots
    with float32 results."""
    return "highest" if xd.of(dtype).ieee else None


def native(x):
    """BHSD <-> BTNH (the spec's layout and JAX's; the same swap both ways)."""
    return jnp.swapaxes(x, 1, 2)


def function(cfg: xw.Attention, variant: str) -> Callable:
    """out = f(q, k, v) in JAX's BTNH layout, not yet jitted."""
    if variant not in IMPLEMENTATIONS:
        raise ValueError(f"jax attention: unknown variant {variant!r} (known: default, {', '.join(v for v in IMPLEMENTATIONS if v)})")
    impl, causal, scale, prec = IMPLEMENTATIONS[variant], cfg.causal, cfg.scale, precision(cfg.dtype)

    def f(q, k, v):
        with jax.default_matmul_precision(prec) if prec else contextlib.nullcontext():
            return jax.nn.dot_product_attention(q, k, v, scale=scale, is_causal=causal, implementation=impl)
    return f


def _phase(cfg: xw.Attention, f: Callable, args: tuple) -> Callable[[], Any]:
    """The phase's step over args (q, k, v[, dout]) already on the device, in BTNH."""
    if cfg.phase == "forward":
        return timed_step(jax.jit(f), args[:3])
    if cfg.phase == "backward":
        # The forward and its residuals, once, before timing; the pullback is
        # a pytree (a Partial), so the jitted call takes it as an argument.
        out, pullback = jax.vjp(jax.jit(f), *args[:3])
        backward = timed_step(jax.jit(lambda pb, do: pb(do)), (pullback, args[3]))
        backward.out = out  # export reads it
        return backward

    @jax.jit
    def both(q, k, v, do):
        out, pullback = jax.vjp(f, q, k, v)
        return (out, *pullback(do))
    return timed_step(both, args)


def _refusals(cfg: xw.Attention, variant: str, device, f: Callable, args: tuple) -> None:
    """Combinations JAX refuses while tracing, traced once here so the refusal
    is `unsupported` with JAX's reason rather than a failed first call:
    cuDNN checks the GPU, shapes and dtypes; XLA:CPU (jax 0.10) has no
    float16 dot with float32 results, which dot_product_attention asks for.
    Other combinations are not traced twice."""
    if variant != "cudnn" and not (cfg.dtype == "float16" and device.platform == "cpu"):
        return
    # The backward is lowered too: cuDNN's backward refuses shapes its
    # forward takes (seq_len 37 on the H100: "Unsupported sequence length").
    traced = (lambda q, k, v, do: jax.vjp(f, q, k, v)[1](do)) if cfg.backward else f
    try:
        jax.jit(traced).lower(*args[:4 if cfg.backward else 3])
    except (RuntimeError, ValueError, NotImplementedError) as e:
        impl = IMPLEMENTATIONS[variant] or "default"
        raise xt.Unsupported(f"jax {jax.__version__} dot_product_attention (implementation {impl}) cannot run "
                             f"{cfg.dtype} head_dim {cfg.head_dim} on {device.platform}: {' '.join(str(e).split())}") from None


def _names(cfg: xw.Attention) -> tuple:
    return ("q", "k", "v", "dout") if cfg.backward else ("q", "k", "v")


def prepare(cfg: xw.Attention, variant: str, device, seed: int) -> Callable[[], Any]:
    """Seeded normal inputs on the device in the dtype; the phase's step."""
    cfg.check()
    shapes = {"q": cfg.q_shape(), "k": cfg.k_shape(), "v": cfg.k_shape(), "dout": cfg.q_shape()}
    keys = jax.random.split(jax.random.PRNGKey(seed), 4)
    with jax.default_device(device):
        spec = tuple(jax.random.normal(keys[i], shapes[n]).astype(jax_dtype(cfg.dtype)) for i, n in enumerate(_names(cfg)))
    args = jax.block_until_ready(tuple(native(x) for x in spec))  # converted here, never in a timed call
    del spec
    f = function(cfg, variant)
    _refusals(cfg, variant, device, f, args)
    return _phase(cfg, f, args)


def export(cfg: xw.Attention, variant: str, device, inputs: dict) -> dict:
    """One call of the phase on the given float32 inputs; out (and dq, dk, dv
    for the backward phases) as float32 numpy arrays."""
    cfg.check()
    args = tuple(native(jax.device_put(jnp.asarray(inputs[n], jax_dtype(cfg.dtype)), device)) for n in _names(cfg))
    f = function(cfg, variant)
    _refusals(cfg, variant, device, f, args)
    step = _phase(cfg, f, args)
    res = step()
    if cfg.phase == "forward":
        res = (res,)
    elif cfg.phase == "backward":
        res = (step.out, *res)
    # out, dq, dk, dv are in BTNH like the inputs: back to the spec's BHSD.
    return {name: np.asarray(native(x).astype(jnp.float32)) for name, x in zip(cfg.outputs(), res)}
