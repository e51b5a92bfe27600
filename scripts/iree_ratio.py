#!/usr/bin/env python3
"""iree's time over pytorch's (cuBLAS / cuDNN-or-flash SDPA) per class of
shape, from sweep folders holding both backends' results (scripts/h100-iree.sh):
for each configuration both ran, the ratio of their medians; per class the
median ratio, its range, and each side's median TFLOP/s. A ratio of 5 means
iree took 5x pytorch's time. Both are on the device clock on an NVIDIA GPU
(the span of the call's CUPTI records, docs/protocol.md); each result's
env.timing says which clock it got.
Usage: scripts/iree_ratio.py SWEEP_DIR [SWEEP_DIR...]"""

import json
import os
import statistics
import sys
from collections import defaultdict

from results_files import result_files


def gemm_class(p: dict) -> str:
    m, n, k = int(p["m"]), int(p["n"]), int(p["k"])
    if p["layout"] == "nn" and m == n == k:
        size = "<=1024" if m <= 1024 else ("1536-4096" if m <= 4096 else ">=6144")
        return f"gemm {p['dtype']:8} square nn {size}"
    rows = "m<=16 (decode)" if m <= 16 else ("m 17-1024" if m <= 1024 else "m>1024 (prefill)")
    return f"gemm {p['dtype']:8} {p['layout']} {rows}"


def attention_class(p: dict) -> str:
    s = int(p["seq_len"])
    return (f"attention {p['dtype']:8} d{p['head_dim']} {'causal ' if p.get('causal') == 'true' else ''}"
            f"{'s<=2048' if s <= 2048 else 's>=4096'}")


def main(dirs) -> int:
    cells = defaultdict(dict)  # (workload, phase, params) -> backend -> (median ms, TFLOP/s)
    for d in dirs:
        for path, raw in result_files(d, "*.json"):
            if os.path.basename(path).startswith("_"):
                continue
            r = json.loads(raw)
            if r.get("status") != "ok" or "stats" not in r:
                continue
            c = r["config"]
            key = (c["workload"], c["phase"], tuple(sorted(c["params"].items())))
            cells[key][r["backend"]] = (r["stats"]["median_ms"], r.get("throughput", 0.0))
    by_class = defaultdict(list)
    for (workload, phase, params), by in cells.items():
        if "iree" in by and "pytorch" in by:
            p = dict(params)
            cls = gemm_class(p) if workload == "gemm" else attention_class(p)
            by_class[cls].append((by["iree"][0] / by["pytorch"][0], by["iree"][1], by["pytorch"][1]))
    if not by_class:
        print(f"no configuration with both iree and pytorch results under {', '.join(dirs)}", file=sys.stderr)
        return 1
    print(f"{'class of shape':46} {'n':>4} {'iree/pytorch time':>18} {'min..max':>15} {'TFLOP/s iree':>13} {'pytorch':>8}")
    for cls in sorted(by_class):
        rows = by_class[cls]
        ratios = [r[0] for r in rows]
        print(f"{cls:46} {len(rows):4d} {statistics.median(ratios):18.2f} "
              f"{min(ratios):7.2f}..{max(ratios):<7.2f} {statistics.median(r[1] for r in rows):13.1f} "
              f"{statistics.median(r[2] for r in rows):8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["results/h100-iree/gemm", "results/h100-iree/attention"]))
