"""Timing statistics, computed exactly as the Go harness does (harness/stats).

The harness recomputes these from ``samples_ms``; the Python side computes them
too so that a result printed by ``benchmark.py --json`` on its own is complete.
Both must agree to the last bit that matters, so every rule here mirrors
harness/stats/stats.go: sample standard deviation (n-1), numpy's default
'linear' quantiles, and a distribution-free order-statistic interval for the
median. Pure Python: no numpy, so this works before any framework is imported.
"""

from __future__ import annotations

import math
from typing import Sequence

CV_WARN_THRESHOLD = 0.10
CV_WARNING = "cv above 10%: timings are noisy"
METHOD_ORDER_STATISTIC = "order-statistic binomial"
METHOD_MIN_MAX = "min-max (n<6)"


def quantile(sorted_x: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy 'linear')."""
    n = len(sorted_x)
    if n == 1:
        return sorted_x[0]
    pos = q * (n - 1)
    lo = math.floor(pos)
    if lo >= n - 1:
        return sorted_x[n - 1]
    frac = pos - lo
    return sorted_x[lo] + frac * (sorted_x[lo + 1] - sorted_x[lo])


def _coverage(n: int, k: int) -> float:
    """P(k+1 <= Binomial(n, 1/2) <= n-1-k): the chance that the 0-indexed
    order statistics x[k] and x[n-1-k] bracket the true median (at least k+1
    samples fall on each side of it). Summed in log space like the Go code."""
    total = 0.0
    for i in range(k + 1, n - k):
        total += math.exp(
            math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2)
        )
    return total


def median_ci_index(n: int, level: float = 0.95) -> int | None:
    """Largest k with coverage(n, k) >= level, or None when even [min, max]
    falls short (n < 6 at 95%). n=10 gives k=1, i.e. the interval [x[1], x[8]]."""
    best = None
    for k in range((n + 1) // 2):
        if _coverage(n, k) >= level:
            best = k
        else:
            break
    return best


def summarize(samples: Sequence[float]) -> dict:
    """The result.Stats object (JSON field names) for samples in ms.

    Raises ValueError for no samples or a sample that is NaN, infinite or
    negative, as the harness does."""
    n = len(samples)
    if n == 0:
        raise ValueError("summarize: no samples")
    for i, s in enumerate(samples):
        if math.isnan(s) or math.isinf(s) or s < 0:
            raise ValueError(f"summarize: sample {i} is {s}; samples must be finite and non-negative")
    x = sorted(float(s) for s in samples)
    mid = n // 2
    median = x[mid] if n % 2 else (x[mid - 1] + x[mid]) / 2
    mean = sum(x) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in x) / (n - 1)) if n > 1 else 0.0
    k = median_ci_index(n, 0.95)
    if k is None:
        lo, hi, method = x[0], x[-1], METHOD_MIN_MAX
    else:
        lo, hi, method = x[k], x[n - 1 - k], METHOD_ORDER_STATISTIC
    return {
        "median_ms": median,
        "mean_ms": mean,
        "std_ms": std,
        "min_ms": x[0],
        "max_ms": x[-1],
        "p10_ms": quantile(x, 0.10),
        "p90_ms": quantile(x, 0.90),
        "ci95_low_ms": lo,
        "ci95_high_ms": hi,
        "cv": std / mean if mean > 0 else 0.0,
        "ci_method": method,
        "n": n,
    }


def tokens_per_s(batch: int, seq_len: int, median_ms: float) -> float:
    """Tokens one timed call processes, per second of the median call."""
    return batch * seq_len / (median_ms / 1000.0) if median_ms > 0 else 0.0
