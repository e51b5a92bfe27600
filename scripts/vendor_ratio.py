#!/usr/bin/env python3
"""Per-shape time ratio pytorch / burnstyle-hip from scripts/h100-vendor.sh's
interleaved rounds: for each shape, the ratio of the two backends' medians
within each round, then the median over rounds (a round pairs runs made a
minute apart at most, so clock drift between rounds cancels in the ratio).
Usage: scripts/vendor_ratio.py [results/h100-vendor]"""

import json
import os
import statistics
import sys
from collections import defaultdict

from results_files import result_files


def main(root: str) -> int:
    med = defaultdict(dict)  # (layout, m, n, k, round) -> backend -> median ms
    for path, raw in result_files(root, "*/round*/*/*.json"):
        rnd = path.split(os.sep)[-3]
        r = json.loads(raw)
        if r.get("status") != "ok":
            continue
        p = r["config"]["params"]
        key = (p["layout"], int(p["m"]), int(p["n"]), int(p["k"]), rnd)
        med[key][r["backend"]] = r["stats"]["median_ms"]
    ratios, best = defaultdict(list), defaultdict(dict)
    for (layout, m, n, k, _), by in med.items():
        if {"pytorch", "burnstyle-hip"} <= by.keys():
            ratios[(layout, m, n, k)].append(by["pytorch"] / by["burnstyle-hip"])
        for b, ms in by.items():
            best[(layout, m, n, k)][b] = min(ms, best[(layout, m, n, k)].get(b, float("inf")))
    if not ratios:
        print(f"no shape with both pytorch and burnstyle-hip under {root}", file=sys.stderr)
        return 1
    print(f"{'layout':6} {'m x n x k':>20} {'rounds':>6} {'pytorch/burnstyle-hip':>22} {'min..max':>13}"
          f" {'TFLOP/s pytorch':>16} {'burnstyle-hip':>14}")
    worst = 0.0
    for key in sorted(ratios):
        layout, m, n, k = key
        rs = ratios[key]
        r = statistics.median(rs)
        worst = max(worst, abs(r - 1))
        tf = {b: 2 * m * n * k / ms / 1e9 for b, ms in best[key].items()}
        print(f"{layout:6} {f'{m}x{n}x{k}':>20} {len(rs):>6} {r:>22.4f} {f'{min(rs):.3f}..{max(rs):.3f}':>13}"
              f" {tf.get('pytorch', 0):>16.1f} {tf.get('burnstyle-hip', 0):>14.1f}")
    print(f"largest gap: {100 * worst:.1f}% (median over rounds of the per-round ratio; TFLOP/s from the best round's median)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "results/h100-vendor"))
