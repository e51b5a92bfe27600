"""The TTT inner loop as a torch.autograd.Function: model.py's forward
(asked to save the state at the start of every mini-batch) and the
hand-written Triton backward of inner_bwd.py (linear) and
inner_bwd_mlp.py (mlp). ttt_inner is the triton backend's drop-in for
the pytorch model's ttt_inner; everything around the inner loop (projections,
RoPE, the gate's sigmoid, the post norm) stays pytorch autograd.

Precision is the forward's: the state, every gradient and every reduction
float32; the products in the inputs' dtype (float32 products IEEE). In the
model the inner loop's inputs are float32 in every run (model.ttt_layer
casts them to the accumulation dtype), so a bfloat16 training step runs
these kernels in float32.
"""

from __future__ import annotations

import torch

from xbench_triton import inner_bwd as lin_bwd
from xbench_triton import inner_bwd_mlp as mlp_bwd
from xbench_triton import model
from xbench_py import types as xt
from xbench_py import spec as xs

PARAMS = {"linear": ("W1", "b1", "ln_w", "ln_b", "tok_delta"),
          "mlp": ("W1", "b1", "W2", "b2", "ln_w", "ln_b", "tok_delta")}


def check_shapes(head_dim: int, mini_batch: int) -> str | None:
    """Why the backward kernels cannot run these sizes, or None: they take
    tl.arange over f, 4f and K, so powers of two from 16 (a forward that pads
    f may accept more)."""
    for n, what in ((head_dim, "head_dim f"), (mini_batch, "--mini-batch")):
        if n < 16 or n & (n - 1):
            return f"the triton backward needs {what} a power of two >= 16, got {n}"
    return None


def ttt_inner(xq, xk, xv, gate, p: dict, ttt_type: str, mini_batch: int):
    """model.ttt_inner, differentiable when autograd needs it (the
    states are saved only then)."""
    params = [p[n] for n in PARAMS[ttt_type]]
    if torch.is_grad_enabled() and any(t.requires_grad for t in (xq, xk, xv, gate, *params)):
        why = check_shapes(xq.shape[-1], mini_batch)
        if why:
            raise xt.Unsupported(why)
        return InnerLoop.apply(ttt_type, mini_batch, xq, xk, xv, gate, *params)
    return model.ttt_inner(xq, xk, xv, gate, p, ttt_type, mini_batch)


def state_buffers(ttt_type: str, B: int, nh: int, N: int, f: int, hidden: int, device) -> tuple:
    """The forward's saved states, laid out as model.ttt_inner(states=) asks."""
    if ttt_type == "linear":
        return (torch.empty((B * nh, N, f + 1, f), device=device, dtype=torch.float32),)
    return (torch.empty((B * nh, N, f + 1, hidden), device=device, dtype=torch.float32),
            torch.empty((B * nh, N, hidden + 1, f), device=device, dtype=torch.float32))


def scaled_tok(tok_delta, K: int, ttt_type: str, f: int):
    """base_lr/f · max(0, 1/(i+1) + tok_delta[i]), as model.ttt_inner forms it."""
    i = torch.arange(1, K + 1, device=tok_delta.device, dtype=torch.float32)
    return (xs.BASE_LR[ttt_type] / f) * torch.relu(1.0 / i + tok_delta.float())


class InnerLoop(torch.autograd.Function):
    @staticmethod
    def forward(ctx, ttt_type, K, xq, xk, xv, gate, *params):
        # labelled as the backward is (below), or `xbench profile` on cpu
        # files the interpreter's time under this Function's name, as other
        with torch.profiler.record_function("ttt_inner forward (Triton)"):
            return InnerLoop._forward(ctx, ttt_type, K, xq, xk, xv, gate, *params)

    @staticmethod
    def _forward(ctx, ttt_type, K, xq, xk, xv, gate, *params):
        B, nh, L, f = xq.shape
        xq, xk, xv, gate = (t.contiguous() for t in (xq, xk, xv, gate))
        p = dict(zip(PARAMS[ttt_type], params))
        states = state_buffers(ttt_type, B, nh, L // K, f, p["W1"].shape[-1], xq.device)
        out = model.ttt_inner(xq, xk, xv, gate, p, ttt_type, K, states=states)
        ctx.ttt_type, ctx.K, ctx.n_states = ttt_type, K, len(states)
        ctx.save_for_backward(xq, xk, xv, gate, *params, *states)
        return out

    @staticmethod
    def backward(ctx, dout):
        # A label of its own for `xbench profile`: in the interpreter (cpu)
        # the kernels are plain Python that torch.profiler sees as no op, and
        # the autograd node's name (InnerLoopBackward) would be filed as other,
        # not with the ttt_ kernels. On a GPU only device events are counted.
        with torch.profiler.record_function("ttt_inner backward (Triton)"):
            return InnerLoop._backward(ctx, dout)

    @staticmethod
    def _backward(ctx, dout):
        ttt_type, K = ctx.ttt_type, ctx.K
        saved = ctx.saved_tensors
        xq, xk, xv, gate = saved[:4]
        params = saved[4:len(saved) - ctx.n_states]
        states = saved[len(saved) - ctx.n_states:]
        p = dict(zip(PARAMS[ttt_type], params))
        B, nh, L, f = xq.shape
        tok = scaled_tok(p["tok_delta"], K, ttt_type, f)
        f32 = {k: p[k].float().contiguous() for k in p}
        args = (xq, xk, xv, gate, tok, f32["ln_w"], f32["ln_b"], states, dout.float().contiguous(), K,
                model.DOT_DTYPES[xq.dtype])
        if ttt_type == "linear":
            g = lin_bwd.backward(*args)
        else:
            g = mlp_bwd.backward(*args, f32["W2"].shape[-2])
        grads = {"ln_w": g["ln_w"].reshape(B, nh, f).sum(0), "ln_b": g["ln_b"].reshape(B, nh, f).sum(0)}
        # the learnable initial state is shared by every sequence: sum over B
        for (w, b), wb in zip((("W1", "b1"), ("W2", "b2")), g["Wb"]):
            wb = wb.reshape(B, nh, *wb.shape[1:]).sum(0)
            grads[w], grads[b] = wb[:, :-1], wb[:, -1]
        i = torch.arange(1, K + 1, device=xq.device, dtype=torch.float32)
        live = (1.0 / i + p["tok_delta"].float()) > 0  # max(0, .) passes no gradient on its flat side
        grads["tok_delta"] = g["tok"] * (xs.BASE_LR[ttt_type] / f) * live
        out = [None, None] + [g[k].to(t.dtype) for k, t in zip(("xq", "xk", "xv", "gate"), (xq, xk, xv, gate))]
        return (*out, *(grads[n].to(t.dtype) for n, t in zip(PARAMS[ttt_type], params)))
