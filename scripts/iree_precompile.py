"""Compile IREE modules ahead of time into a compile-cache folder that can be
carried to a machine with only the IREE runtime (scripts/iree-precompile.sh).

    python iree_precompile.py OUT --probe [--targets sm_80,...]
    python iree_precompile.py OUT --plan PLAN.json[,PLAN.json] [--target sm_80] [--budget-mib 6]

OUT is a --compile-cache folder; modules go to OUT/iree/ under the keys the
backend computes (xbench_iree/cache.py, iree_mlir.for_params), so `xbench ...
--compile-cache OUT` finds them. A PLAN is a sweep folder's _plan.json (the
cells a sweep of the harness's suites ran, e.g. results/h100-gemm/sweep):
every distinct forward gemm/attention configuration in it is compiled, in
priority order (bfloat16 before float32, llm-like nt gemms before the
square nn ones, then attention), and the run stops with a message at the
first module that would take the folder over --budget-mib (compressed).
Prints a line per module and the total.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "plugins", "_python"))

from xbench_iree import cache as iree_cache  # noqa: E402
from xbench_iree import mlir as iree_mlir  # noqa: E402
from xbench_iree import targets as iree_targets  # noqa: E402

# The H100 probe: candidate targets, and per target the gemms it runs
# ("check": small, odd shapes compared with numpy; "time": timed).
PROBE_TARGETS = ("sm_80", "sm_89", "sm_90a")
PROBE_GEMMS = (
    ((33, 45, 57, 2), "nn", "float32", "check"),
    ((256, 384, 512, 1), "nt", "bfloat16", "check"),
    ((1000, 1100, 1200, 1), "tn", "bfloat16", "check"),
    ((4096, 4096, 4096, 1), "nt", "bfloat16", "time"),
    ((4096, 4096, 4096, 1), "nn", "bfloat16", "time"),
    ((8192, 8192, 8192, 1), "nt", "bfloat16", "time"),
    ((4096, 4096, 4096, 1), "nn", "float32", "time"),
)
# (batch, heads, kv_heads, seq, kv, head_dim, causal, dtype, purpose)
PROBE_ATTENTION = (
    (2, 4, 2, 37, 37, 24, True, "float32", "check"),
    (1, 8, 2, 256, 256, 64, True, "bfloat16", "check"),
    (4, 32, 8, 4096, 4096, 128, True, "bfloat16", "time"),
    (4, 32, 8, 4096, 4096, 128, False, "bfloat16", "time"),
)


def gemm_label(m, n, k, batch, layout, dtype) -> str:
    return f"gemm {m}x{n}x{k} b{batch} {layout} {dtype}"


def attention_label(b, h, kh, s, kv, d, causal, dtype) -> str:
    return f"attention b{b} h{h}/{kh} s{s} kv{kv} d{d}{' causal' if causal else ''} {dtype}"


def probe(targets=PROBE_TARGETS) -> list:
    jobs = []
    for t in targets:
        target = iree_targets.cpu() if t == "cpu" else iree_targets.cuda(t)
        for (m, n, k, batch), layout, dtype, _ in PROBE_GEMMS:
            jobs.append((target, gemm_label(m, n, k, batch, layout, dtype), iree_mlir.gemm(m, n, k, batch, layout, dtype)))
        for *shape, _ in PROBE_ATTENTION:
            jobs.append((target, attention_label(*shape), iree_mlir.attention(*shape)))
    return jobs


def plan_jobs(plans: list, target: iree_targets.Target) -> list:
    """The distinct forward gemm/attention configurations of sweep plans,
    in priority order: gemm bfloat16 nt, gemm bfloat16 nn, attention, gemm
    float32 nt, gemm float32 nn (then anything else), smallest first within each."""
    seen, items = set(), []
    for path in plans:
        with open(path) as f:
            cells = json.load(f)["cells"]
        for c in cells:
            cfg = c["config"]
            if cfg["workload"] not in ("gemm", "attention") or cfg.get("phase", "forward") != "forward":
                continue
            key = (cfg["workload"],) + tuple(sorted(cfg["params"].items()))
            if key in seen:
                continue
            seen.add(key)
            items.append((cfg["workload"], dict(cfg["params"])))

    def rank(item):
        w, p = item
        order = {("gemm", "bfloat16", "nt"): 0, ("gemm", "bfloat16", "nn"): 1, ("attention", "bfloat16", ""): 2,
                 ("gemm", "float32", "nt"): 3, ("gemm", "float32", "nn"): 4}
        cls = order.get((w, p.get("dtype", ""), p.get("layout", "") if w == "gemm" else ""), 9)
        size = 1
        for x in ("m", "n", "k", "batch", "heads", "seq_len", "head_dim"):
            size *= int(p.get(x, "1"))
        return cls, size
    items.sort(key=rank)
    return [(target,) + iree_mlir.for_params(w, p) for w, p in items]


def run(jobs: list, out: str, budget_mib: float) -> int:
    cache = os.path.join(out, "iree")
    total, n_new, t_all = 0, 0, time.perf_counter()
    for i, (target, label, mlir) in enumerate(jobs, 1):
        data, how = iree_cache.get(target, mlir, label, cache)
        stored = os.path.join(cache, iree_cache.key(target, mlir) + ".vmfb.xz")
        total += os.path.getsize(stored)
        n_new += how["how"] == "compiled"
        print(f"[{i}/{len(jobs)}] {target.name} {label}: {how['how']} {how['ms']:.0f} ms, {len(data) / 1024:.0f} KiB "
              f"({os.path.getsize(stored) / 1024:.0f} KiB stored), total {total / 2**20:.2f} MiB",
              flush=True)
        if total > budget_mib * 2**20:
            print(f"STOP at [{i}/{len(jobs)}]: {total / 2**20:.2f} MiB is over the budget of {budget_mib} MiB; "
                  f"the modules after it in priority order are not compiled", flush=True)
            return 1
    print(f"{len(jobs)} modules ({n_new} compiled now) in {cache}: {total / 2**20:.1f} MiB, "
          f"{time.perf_counter() - t_all:.0f} s", flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--probe", action="store_true", help="the H100 probe's modules, for every candidate target")
    ap.add_argument("--targets", default=",".join(PROBE_TARGETS), help="probe targets (cpu for a local check)")
    ap.add_argument("--plan", default="", help="comma list of sweep _plan.json files to precompile")
    ap.add_argument("--target", default=iree_targets.DEFAULT_CUDA,
                    help="target of --plan: a CUDA target (sm_80, sm_89, sm_90a) or gfx942, gfx90a, gfx1030")
    ap.add_argument("--budget-mib", type=float, default=6.0, help="largest size of the compressed modules")
    a = ap.parse_args(argv)
    if a.probe:
        return run(probe(a.targets.split(",")), a.out, a.budget_mib)
    if not a.plan:
        ap.error("nothing to do: give --probe or --plan")
    target = iree_targets.rocm(a.target) if a.target.startswith("gfx") else iree_targets.cuda(a.target)
    return run(plan_jobs(a.plan.split(","), target), a.out, a.budget_mib)


if __name__ == "__main__":
    sys.exit(main())
