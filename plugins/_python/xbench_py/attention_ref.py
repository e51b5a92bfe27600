"""xbench_py.attention_ref: a float64 numpy attention and its gradients,
written from the spec's formulas (docs/workloads/attention.md), for the
conformance suite and the backends' own attention tests (no framework in it,
as scan_ref)."""

import numpy as np


def reference(q, k, v, dout, causal):
    """(out, dq, dk, dv) in float64; the gradients are None without dout."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    g = q.shape[1] // k.shape[1]
    kr, vr = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)  # head h reads kv head h // g
    scale = q.shape[-1] ** -0.5
    s = scale * q @ np.swapaxes(kr, -1, -2)
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    out = p @ vr
    if dout is None:
        return out, None, None, None
    do = np.asarray(dout, np.float64)
    dp = do @ np.swapaxes(vr, -1, -2)
    ds = p * (dp - (do * out).sum(-1, keepdims=True))
    dq = scale * ds @ kr
    dkr, dvr = scale * np.swapaxes(ds, -1, -2) @ q, np.swapaxes(p, -1, -2) @ do
    fold = lambda x: x.reshape(k.shape[0], k.shape[1], g, *x.shape[2:]).sum(2)  # noqa: E731  sum a group's heads
    return out, dq, fold(dkr), fold(dvr)


def rel(x, ref):
    return float(np.linalg.norm(np.asarray(x, np.float64) - ref) / np.linalg.norm(ref))


def inputs(cfg, seed=0):
    """Normal q, k, v (and dout) as float32 numpy arrays."""
    rng = np.random.default_rng(seed)
    names = ("q", "k", "v", "dout") if cfg.backward else ("q", "k", "v")
    shapes = {"q": cfg.q_shape(), "k": cfg.k_shape(), "v": cfg.k_shape(), "dout": cfg.q_shape()}
    return {n: rng.standard_normal(shapes[n]).astype(np.float32) for n in names}
