"""xbench_stats must agree with harness/stats (same cases as stats_test.go)."""

import math
import random

import numpy as np
import pytest

import xbench_stats as st


@pytest.mark.parametrize("n,k", [(1, None), (5, None), (6, 0), (10, 1), (20, 5), (100, 39)])
def test_median_ci_index(n, k):
    assert st.median_ci_index(n, 0.95) == k


def test_ci_index_n10_by_hand():
    # P(k+1 <= Bin(10, 1/2) <= 9-k): k=1 covers 1002/1024, k=2 only 912/1024.
    c = [math.comb(10, i) for i in range(11)]
    assert sum(c[2:9]) / 1024 >= 0.95 > sum(c[3:8]) / 1024
    assert st._coverage(10, 1) == pytest.approx(sum(c[2:9]) / 1024, abs=1e-14)


def test_summarize_hand_values():
    s = st.summarize([10, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    want = {"median_ms": 5.5, "mean_ms": 5.5, "min_ms": 1, "max_ms": 10, "p10_ms": 1.9, "p90_ms": 9.1,
            "std_ms": 3.0276503540974917, "ci95_low_ms": 2, "ci95_high_ms": 9, "cv": 3.0276503540974917 / 5.5}
    for k, v in want.items():
        assert s[k] == pytest.approx(v, abs=1e-12), k
    assert s["ci_method"] == "order-statistic binomial" and s["n"] == 10


def test_summarize_small_and_one():
    s = st.summarize([3, 1, 2])
    assert (s["ci_method"], s["ci95_low_ms"], s["ci95_high_ms"], s["median_ms"]) == ("min-max (n<6)", 1, 3, 2)
    one = st.summarize([4.0])
    assert one["std_ms"] == 0 and one["cv"] == 0 and one["p10_ms"] == 4.0


@pytest.mark.parametrize("bad", [[], [1, float("nan")], [-1, 2], [float("inf")]])
def test_summarize_rejects(bad):
    with pytest.raises(ValueError):
        st.summarize(bad)


def test_against_numpy():
    rng = random.Random(1)
    for n in (2, 3, 7, 10, 31):
        x = [rng.uniform(1, 100) for _ in range(n)]
        s = st.summarize(x)
        assert s["p10_ms"] == pytest.approx(np.percentile(x, 10), rel=1e-12)
        assert s["p90_ms"] == pytest.approx(np.percentile(x, 90), rel=1e-12)
        assert s["median_ms"] == pytest.approx(np.median(x), rel=1e-12)
        assert s["std_ms"] == pytest.approx(np.std(x, ddof=1), rel=1e-12)


def test_tokens_per_s():
    assert st.tokens_per_s(2, 1024, 512.0) == pytest.approx(4000.0)
