"""The TTT model of docs/workloads/ttt.md in JAX, and its timer.

Plain functions over a dict of parameter arrays named as in the spec, so weight
files map one to one and jax.grad differentiates with respect to exactly those
arrays. backend.py adapts it to xbench_py.

Precision (spec "Precision"): the caller traces these functions inside
jax.default_matmul_precision(matmul_precision(dtype)), so a float32 run's dots
are IEEE float32 (HIGHEST) and tf32 is XLA's DEFAULT (TF32 on NVIDIA GPUs).
Dense matmuls ask for float32 accumulation explicitly; norm statistics, RoPE,
the learning-rate gate, the whole inner loop (its state W/b is float32) and
the loss are float32.

The mini-batch loop is a lax.scan. Its body holds only what depends on the
inner state (the serial chain); everything else is computed for all
mini-batches at once, before or after the scan, as a few large batched ops.
"""

from __future__ import annotations

import math
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from xbench_py import dtypes as xd
from xbench_py import guard
from xbench_py import types as xt
from xbench_py import spec as xs

F32 = jnp.float32


def jax_dtype(name: str, result: bool = False):
    """The jax.numpy dtype of xbench dtype name's storage element (with
    result: the element results come back in), from xbench_py.dtypes; every
    jax module (model, gemm, attention) resolves through it."""
    def form(element: str):
        t = getattr(jnp, element, None)
        try:
            return t if t is not None and jnp.dtype(t).name == element else None
        except TypeError:  # a jnp attribute of that name that is not a dtype
            return None
    return xd.resolve(name, form, f"jax {jax.__version__}", result)


def matmul_precision(name: str) -> str:
    """The default_matmul_precision a TTT run of dtype name is traced under:
    "highest" where the dtype means IEEE products (a GPU would run float32
    dots in TF32 otherwise), XLA's "default" for tf32 and the narrow dtypes."""
    return "highest" if xd.of(name).ieee else "default"


def scan_unroll(device_kind: str) -> int:
    """Mini-batches per scan iteration. On a GPU the body is a handful of tiny
    kernels and every iteration of an XLA while loop also pays its loop
    control, so unrolling a few steps trades compile time for fewer of those;
    on cpu it matters little. XBENCH_JAX_UNROLL overrides (for tuning)."""
    env = os.environ.get("XBENCH_JAX_UNROLL")
    return int(env) if env else (1 if device_kind == "cpu" else 8)


def mm(a, b):
    """Dense matmul in the activations' dtype, accumulated in float32."""
    return jnp.matmul(a, b, preferred_element_type=F32).astype(a.dtype)


def bmm_t(a, b):
    """a @ b^T over the last two axes (float32 operands inside the inner loop)."""
    return jnp.einsum("...ik,...jk->...ij", a, b)


def rms_norm(x, w):
    xf = x.astype(F32)
    y = xf * lax.rsqrt(jnp.mean(xf * xf, -1, keepdims=True) + xs.EPS) * w.astype(F32)
    return y.astype(x.dtype)


def standardize(x):
    """LayerNorm without the affine part (population variance)."""
    mu = jnp.mean(x, -1, keepdims=True)
    xc_ = x - mu
    return xc_ * lax.rsqrt(jnp.mean(xc_ * xc_, -1, keepdims=True) + xs.EPS)


def gelu(x):
    return jax.nn.gelu(x, approximate=True)


def gelu_prime(x):
    """d/dx of the tanh-approximated gelu."""
    c = math.sqrt(2.0 / math.pi)
    t = jnp.tanh(c * (x + 0.044715 * x ** 3))
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3 * 0.044715 * x * x)


def ln_l2_grad(z, target, ln_w, ln_b):
    """Spec step 5: d/dZ of 1/2 sum((LN(Z) - target)^2), per row, closed form."""
    f = z.shape[-1]
    mu = jnp.mean(z, -1, keepdims=True)
    zc = z - mu
    rs = lax.rsqrt(jnp.mean(zc * zc, -1, keepdims=True) + xs.EPS)  # 1/s
    xh = zc * rs
    g = (ln_w * xh + ln_b - target) * ln_w
    return (f * g - jnp.sum(g, -1, keepdims=True) - xh * jnp.sum(g * xh, -1, keepdims=True)) * (rs / f)


def rope(x, mini_batch: int):
    """Rotate-half RoPE on [B, nh, L, f]; positions restart every mini-batch.
    The angles are trace-time constants, computed in float64 by numpy."""
    L, f = x.shape[-2], x.shape[-1]
    half = f // 2
    ang = (np.arange(L) % mini_batch)[:, None] * xs.ROPE_THETA ** (-2.0 * np.arange(half) / f)
    cos, sin = jnp.asarray(np.cos(ang), x.dtype), jnp.asarray(np.sin(ang), x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return jnp.concatenate((x1 * cos - x2 * sin, x2 * cos + x1 * sin), -1)


def causal_conv(x, w, b):
    """The mamba backbone's causal depthwise conv over the sequence of x [B, L, C]:
    y[t, c] = b[c] + sum_k w[c, k] x[t-3+k, c] (w [C, 4], b [C]), x = 0 before
    the sequence starts. Written as a sum of shifted products of a left-padded
    x, which XLA fuses into one elementwise kernel; float32 accumulation,
    x's dtype out."""
    L, width = x.shape[-2], w.shape[-1]
    xp = jnp.pad(x.astype(F32), ((0, 0), (width - 1, 0), (0, 0)))
    wf = w.astype(F32)
    y = b.astype(F32) + sum(xp[:, k:k + L] * wf[:, k] for k in range(width))
    return y.astype(x.dtype)


def ttt_inner(xq, xk, xv, gate, p: dict, ttt_type: str, mini_batch: int, unroll: int = 1):
    """Spec steps 3-5 for every head and sequence at once.

    xq/xk/xv [B, nh, L, f] (rotated), gate [B, nh, L] (after the sigmoid); p
    holds W1, b1, (W2, b2), ln_w, ln_b, tok_delta of one layer (no prefix).
    Returns out [B, nh, L, f] in float32. unroll: see scan_unroll."""
    B, nh, L, f = xq.shape
    K, N = mini_batch, L // mini_batch

    def blocks(t):  # [B, nh, L, d] -> [N, B, nh, K, d]: scan over the leading axis
        return jnp.moveaxis(t.astype(F32).reshape(B, nh, N, K, -1), 2, 0)

    q, k, v = blocks(xq), blocks(xk), blocks(xv)
    g = jnp.moveaxis(gate.astype(F32).reshape(B, nh, N, K), 2, 0)  # [N, B, nh, K]
    tok = jax.nn.relu(1.0 / jnp.arange(1, K + 1, dtype=F32) + p["tok_delta"].astype(F32))
    eta = (xs.BASE_LR[ttt_type] / f) * tok[:, None] * g[..., None, :]  # eta[.., i, j] = tok[i] gate[j]
    eta_last = eta[..., -1, :, None]  # [N, B, nh, K, 1]: weights of the end-of-batch update
    causal = jnp.tril(jnp.ones((K, K), bool))
    # tril(eta * Q Kx^T) @ G + tril(eta) @ G = tril(eta * (Q Kx^T + 1)) @ G
    m1 = jnp.where(causal, eta * (bmm_t(q, k) + 1.0), 0.0)
    target = v - k
    ln_w, ln_b = p["ln_w"].astype(F32)[:, None, :], p["ln_b"].astype(F32)[:, None, :]  # [nh, 1, f]
    # One product per step for both Q and Kx against the same state.
    qk = jnp.concatenate((q, k), -2)  # [N, B, nh, 2K, f]

    def state(name):  # every sequence of the batch starts from the shared weights
        w = p[name].astype(F32)
        w = w if w.ndim == 3 else w[:, None, :]
        return jnp.broadcast_to(w, (B,) + w.shape)

    if ttt_type == "linear":
        def step(carry, xs):
            W1, b1 = carry
            qk_n, k_n, tgt, e = xs
            z = qk_n @ W1 + b1  # rows :K are Q @ W1 + b1, rows K: are Z
            G = ln_l2_grad(z[..., K:, :], tgt, ln_w, ln_b)
            eG = e * G
            W1 = W1 - jnp.swapaxes(k_n, -1, -2) @ eG
            b1 = b1 - jnp.sum(eG, -2, keepdims=True)
            return (W1, b1), (z[..., :K, :], G)

        _, (qw, G) = lax.scan(step, (state("W1"), state("b1")), (qk, k, target, eta_last), unroll=unroll)
        zbar = qw - m1 @ G  # the causal in-batch term for every mini-batch at once
    else:
        def step(carry, xs):
            W1, b1, W2, b2 = carry
            qk_n, k_n, tgt, e, m1_n = xs
            z = qk_n @ W1 + b1
            z1 = z[..., K:, :]
            x2 = gelu(z1)
            G2 = ln_l2_grad(x2 @ W2 + b2, tgt, ln_w, ln_b)
            G1 = bmm_t(G2, W2) * gelu_prime(z1)
            x2bar = gelu(z[..., :K, :] - m1_n @ G1)
            eG1, eG2 = e * G1, e * G2
            zw = x2bar @ W2 + b2
            W1 = W1 - jnp.swapaxes(k_n, -1, -2) @ eG1
            b1 = b1 - jnp.sum(eG1, -2, keepdims=True)
            W2 = W2 - jnp.swapaxes(x2, -1, -2) @ eG2
            b2 = b2 - jnp.sum(eG2, -2, keepdims=True)
            return (W1, b1, W2, b2), (zw, x2bar, x2, G2)

        carry = (state("W1"), state("b1"), state("W2"), state("b2"))
        _, (zw, x2bar, x2, G2) = lax.scan(step, carry, (qk, k, target, eta_last, m1), unroll=unroll)
        # The second layer's in-batch term does not feed the next step: off the serial chain.
        m2 = jnp.where(causal, eta * (bmm_t(x2bar, x2) + 1.0), 0.0)
        zbar = zw - m2 @ G2
    zbar = jnp.moveaxis(zbar, 0, 2).reshape(B, nh, L, f)
    return xq.astype(F32) + standardize(zbar) * ln_w + ln_b


def ttt_layer(x, p: dict, size: xs.ModelSize, ttt_type: str, mini_batch: int, unroll: int = 1,
              backbone: str = "transformer"):
    """Spec "The TTT layer" on x = RMSNorm_ttt(h) [B, L, C]; returns [B, L, C].
    backbone "mamba": Q and K share one projection and get a causal conv each
    (before RoPE), and the post-norm output is gated by gelu(x @ wg)."""
    B, L, C = x.shape
    nh, f = size.heads, size.head_dim
    mamba = backbone == "mamba"
    # One GEMM for every projection of x and the gate logits (fewer, larger
    # kernels): [Q, K, V, lr] or, for mamba, [QK, V, output gate, lr].
    w = jnp.concatenate((p["wq"], p["wg"] if mamba else p["wk"], p["wv"], p["lr_w"].T), 1)
    y = mm(x, w)

    def heads(t):
        return jnp.swapaxes(t.reshape(B, L, nh, f), 1, 2).astype(F32)

    if mamba:
        xq = causal_conv(y[..., :C], p["conv_q_w"], p["conv_q_b"])
        xk = causal_conv(y[..., :C], p["conv_k_w"], p["conv_k_b"])
    else:
        xq, xk = y[..., :C], y[..., C:2 * C]
    xq, xk = rope(heads(xq), mini_batch), rope(heads(xk), mini_batch)
    xv = heads(y[..., 2 * C:3 * C])
    gate = jnp.swapaxes(jax.nn.sigmoid(y[..., 3 * C:].astype(F32) + p["lr_b"].astype(F32)), 1, 2)
    out = ttt_inner(xq, xk, xv, gate, p, ttt_type, mini_batch, unroll)
    out = jnp.swapaxes(out, 1, 2).reshape(B, L, C)
    out = standardize(out) * p["post_norm_w"].astype(F32) + p["post_norm_b"].astype(F32)
    if mamba:  # the gate multiplies in float32, one rounding before wo
        out = gelu(y[..., C:2 * C].astype(F32)) * out
    return mm(out.astype(x.dtype), p["wo"])


def forward(params: dict, tokens, size: xs.ModelSize, ttt_type: str, mini_batch: int, unroll: int = 1,
            backbone: str = "transformer"):
    """tokens [B, L] -> logits [B, L, V] (spec "Model"; backbone "mamba" adds
    each layer's conv block before its TTT block, and ttt_layer's changes)."""
    if backbone not in xt.BACKBONES:
        raise ValueError(f"forward: backbone {backbone!r}: want one of {xt.BACKBONES}")
    h = params["embed"][tokens]
    for l in range(size.layers):
        pre = f"layers.{l}."
        p = {k[len(pre) + 4:]: v for k, v in params.items() if k.startswith(pre + "ttt.")}
        if backbone == "mamba":
            h = h + causal_conv(rms_norm(h, params[pre + "conv_norm"]), params[pre + "conv_w"], params[pre + "conv_b"])
        h = h + ttt_layer(rms_norm(h, params[pre + "ttt_norm"]), p, size, ttt_type, mini_batch, unroll, backbone)
        x = rms_norm(h, params[pre + "mlp_norm"])
        up = jax.nn.silu(mm(x, params[pre + "mlp.w_gate"])) * mm(x, params[pre + "mlp.w_up"])
        h = h + mm(up, params[pre + "mlp.w_down"])
    return mm(rms_norm(h, params["final_norm"]), params["embed"].T)


def loss_fn(params: dict, tokens, size, ttt_type, mini_batch, unroll=1, backbone="transformer"):
    """Mean next-token cross-entropy in float32; the last position has no label."""
    return loss_and_logits(params, tokens, size, ttt_type, mini_batch, unroll, backbone)[0]


def loss_and_logits(params: dict, tokens, size, ttt_type, mini_batch, unroll=1, backbone="transformer"):
    """(loss, logits): the loss with the logits as jax.grad's auxiliary output."""
    logits = forward(params, tokens, size, ttt_type, mini_batch, unroll, backbone)
    logp = jax.nn.log_softmax(logits[:, :-1].astype(F32), -1)
    return -jnp.mean(jnp.take_along_axis(logp, tokens[:, 1:, None], -1)), logits


def forward_backward(params: dict, tokens, size, ttt_type, mini_batch, unroll=1, backbone="transformer"):
    """One backward-phase call: forward, loss and its gradient w.r.t. every parameter."""
    return jax.value_and_grad(loss_fn)(params, tokens, size, ttt_type, mini_batch, unroll, backbone)


def timed_step(fn, args: tuple):
    """step() = fn(*args), the timed call of a workload: fn jitted, args
    already on the device in the layout and dtype fn takes, so the call is
    the operation alone. fn and args stay on the step for the tests that
    check that from the jaxpr (plugins/jax/tests/test_jax_timed_step.py)."""
    def step():
        return fn(*args)
    step.fn, step.args = fn, tuple(args)
    return step


class BlockTimer(xt.Timer):
    """Host clock around one call, ended by block_until_ready on its outputs
    (JAX has no device events; dispatch is asynchronous without the wait).
    On an NVIDIA GPU the contract wraps it in xbench_py.devclock.SpanTimer, which
    reads the sample from the GPU's own records and uses this timer only to
    make the call and wait for it."""

    description = ("time.perf_counter around each call + jax.block_until_ready on its outputs "
                   "(host timer after a full device sync)")
    label = "host-clock-block"  # on a GPU only where xbench_py.devclock has no device clock

    def __init__(self, device_kind: str = "cpu"):
        self.device_kind = device_kind

    def time(self, fn) -> float:
        t0 = guard.perf_counter()  # the harness's reference, not time.perf_counter (xbench_py.guard)
        jax.block_until_ready(fn())
        return (guard.perf_counter() - t0) * 1000.0

    def flush(self) -> None:
        """On a GPU: add one to every byte of a device buffer larger than L2
        (donated, so it is rewritten in place) and wait for it, before the
        host clock starts. On the CPU: the contract's host-buffer write."""
        if self.device_kind == "cpu":
            return super().flush()
        global _flush_buffer
        if _flush_buffer is None:  # once per process
            from xbench_py import modes

            _flush_buffer = jnp.zeros(modes.GPU_FLUSH_BYTES, dtype=jnp.uint8)
        _flush_buffer = jax.block_until_ready(_bump(_flush_buffer))

    def graph(self, fn):
        raise xt.Unsupported("--cuda-graph: JAX has no API to capture one call as a CUDA graph "
                             "(XLA decides that itself, see --xla_gpu_enable_command_buffer)")


_flush_buffer = None
_bump = jax.jit(lambda b: b + 1, donate_argnums=0)
