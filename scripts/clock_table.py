"""The cross-check's table (issue 31): reads DIR/pytorch.jsonl and
DIR/jax.jsonl (scripts/clock_crosscheck.py) and DIR/burnstyle-hip.jsonl
(`xbench run --json` lines), prints each case's median per framework and
its deviation from pytorch's, then the overhead lines. Exit 1 when a case
read by two frameworks differs by more than TOL (5%), or a cell is missing.

  python3 scripts/clock_table.py DIR
"""

import json
import os
import statistics
import sys

TOL = 0.05
CASES = ["gemm bf16 1024^3", "gemm bf16 4096^3", "gemm bf16 8192^3", "attention fwd b4 h32/8 s4096 d128 causal bf16"]
FRAMEWORKS = ("pytorch", "jax", "burnstyle-hip", "jax-xla")  # jax-xla: XLA's own GEMM choice, not asserted


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def burnstyle_case(r):
    c = r.get("config", {})
    p = c.get("params", {})
    if c.get("workload") == "gemm":
        return f"gemm bf16 {p.get('m')}^3"
    if c.get("workload") == "attention":
        return "attention fwd b4 h32/8 s4096 d128 causal bf16"
    return None


def main(d):
    cells, extra = {}, []
    for fw in ("pytorch", "jax", "jax-xla"):
        for r in rows(os.path.join(d, f"{fw}.jsonl")):
            if "median_ms" in r:
                cells[(r["case"], fw)] = r
            else:
                extra.append(r)
    for r in rows(os.path.join(d, "burnstyle-hip.jsonl")):
        name = burnstyle_case(r)
        if name and r.get("samples_ms"):
            cells[(name, "burnstyle-hip")] = {"median_ms": statistics.median(r["samples_ms"]), "status": r["status"],
                                              "timing": r.get("env", {}).get("timing", "")}
        elif name:
            cells[(name, "burnstyle-hip")] = {"median_ms": None, "status": r.get("status"), "message": r.get("message")}
    ok = True
    print(f"{'case':<48} " + " ".join(f"{f:>14}" for f in FRAMEWORKS) + "   jax/pt  bh/pt  xla/pt verdict")
    for c in CASES:
        ms = [cells.get((c, f), {}).get("median_ms") for f in FRAMEWORKS]
        # Each framework against pytorch; burnstyle-hip runs the GEMM only.
        devs = [m / ms[0] - 1 if m and ms[0] else float("nan") for m in ms[1:]]
        need = devs[:2] if c.startswith("gemm") else devs[:1]
        verdict = "PASS" if all(abs(d) <= TOL for d in need) else "FAIL"  # nan (a missing cell) fails
        ok &= verdict == "PASS"
        print(f"{c:<48} " + " ".join(f"{m:>11.4f} ms" if m else f"{'-':>14}" for m in ms)
              + "  " + " ".join(f"{d:+6.1%}" for d in devs) + f"  {verdict}")
    print("\nclocks (env.timing), the same call on the framework's own clock untraced, and the kernels:")
    for (c, f), r in sorted(cells.items()):
        own = r.get("own_clock_untraced_ms")
        print(f"  {f:<14} {c:<48} {str(r.get('timing', r.get('message', '')))[:100]}")
        if own:
            print(f"  {'':<14} own clock untraced: {own:.4f} ms; kernels: {'; '.join(r.get('kernels', []))[:240]}")
    for (c, f), r in sorted(cells.items()):
        if c not in CASES:
            print(f"\n{c}, {f}: {r['median_ms']} ms; clock: {r.get('timing', '')[:220]}")
    for r in rows(os.path.join(d, "burnstyle-hip-nohold.jsonl")):
        if r.get("samples_ms"):
            print(f"\nburnstyle-hip without the stream hold, {burnstyle_case(r)}: {statistics.median(r['samples_ms']):.4f} ms; "
                  f"clock: {r.get('env', {}).get('timing', '')[:120]}")
    print("\noverhead lines:")
    for r in extra:
        print("  " + json.dumps({k: (round(v, 5) if isinstance(v, float) else v) for k, v in r.items()}))
    print(f"\ncross-check within {TOL:.0%}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
