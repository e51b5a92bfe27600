"""A plain float64 NumPy statement of the scan workload's forward
(docs/workloads/scan.md), for the Python backends' unit tests: a loop per
position that reads like the spec, not a fast path. The harness's own float64
reference (harness/workload/scan) is what `xbench verify` grades against;
this one lets a framework's pytest check itself without the harness.

fixtures(cfg, seed) draws inputs of the spec's shapes (cum_scores as the
cumulative sum of zero-centred scores, the spec's fixture lengths);
forward(cfg, inputs) returns out [batch] for log, max or entropy.
"""

from __future__ import annotations

import numpy as np


def fixtures(cfg, seed: int = 0) -> dict:
    """Seeded inputs in float64 (cast them to the config's dtype to use)."""
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((cfg.batch, cfg.T, cfg.C))
    scores -= scores.mean(axis=1, keepdims=True)
    cum = np.zeros((cfg.batch, cfg.T + 1, cfg.C))
    cum[:, 1:] = np.cumsum(scores, axis=1)
    return {"cum_scores": cum, "transition": 0.5 * rng.standard_normal((cfg.C, cfg.C)),
            "duration_bias": 0.5 * rng.standard_normal((cfg.K, cfg.C)), "lengths": cfg.lengths()}


def _lse(x: np.ndarray) -> float:
    m = x.max()
    return float(m + np.log(np.exp(x - m).sum()))


def forward(cfg, inputs: dict) -> np.ndarray:
    """out[b]: log partition (log), Viterbi score (max) or entropy of the
    segmentation distribution (entropy), in float64."""
    cum = np.asarray(inputs["cum_scores"], np.float64)
    trans = np.asarray(inputs["transition"], np.float64)
    dur = np.asarray(inputs["duration_bias"], np.float64)
    lengths = np.asarray(inputs["lengths"], np.int64)
    out = np.zeros(cfg.batch)
    for b in range(cfg.batch):
        L = int(lengths[b])
        alpha = np.zeros((L + 1, cfg.C))
        expect = np.zeros((L + 1, cfg.C))  # E[score of the prefix | ends at t in c], entropy only
        for t in range(1, L + 1):
            for c in range(cfg.C):
                # every (d, c') way into (t, c): its total alpha + edge, and its edge
                terms, edges, prev = [], [], []
                for d in range(1, min(cfg.K, t) + 1):
                    s = t - d
                    seg = cum[b, t, c] - cum[b, s, c] + dur[d - 1, c]
                    for cp in range(cfg.C):
                        e = seg + trans[cp, c]
                        terms.append(alpha[s, cp] + e)
                        edges.append(e)
                        prev.append(expect[s, cp])
                terms = np.array(terms)
                if cfg.semiring == "max":
                    alpha[t, c] = terms.max()
                else:
                    alpha[t, c] = _lse(terms)
                    w = np.exp(terms - alpha[t, c])
                    expect[t, c] = float(w @ (np.array(prev) + np.array(edges)))
        if cfg.semiring == "max":
            out[b] = alpha[L].max()
        elif cfg.semiring == "log":
            out[b] = _lse(alpha[L])
        else:
            logz = _lse(alpha[L])
            out[b] = logz - float(np.exp(alpha[L] - logz) @ expect[L])
    return out
