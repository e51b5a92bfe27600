"""The cross-check's table (issue 31): reads DIR/pytorch.jsonl and
DIR/jax.jsonl (scripts/clock_crosscheck.py) and DIR/burnstyle-hip.jsonl
(`xbench run --json` lines).

First, the one clock: the vendor kernel (cuBLAS's, cuDNN's) of each case as
each framework's CUPTI records read it. Where two frameworks ran the same
kernel (the same name) it must read within TOL (5%) of pytorch's;
burnstyle-hip, a Go process, is its sample (one cuBLAS call; the span of
its CUPTI records where the Go side loaded libcupti, else held-stream
events, as its timing says) against pytorch's kernel. A different kernel
(cuBLAS picks by the call's output type: JAX asks for float32 out and
converts) is shown and not asserted: it is not the same kernel. Exit 1 when
an asserted pair differs by more, or a cell is missing.

Then each framework's whole sample (docs/protocol.md: the device span of the
call, with every kernel it launched) beside pytorch's, not asserted: the
extra kernels a framework launches for the same operation are its cost, and
the kernel lists below name them. Then the overhead lines.

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


VENDOR = {"gemm": ("nvjet", "cutlass", "gemm", "xmma"), "attention": ("cudnn", "sdpa", "fmha", "flash")}


def vendor_kernel(case: str, kernels: list):
    """(name, us) of the longest kernel of a case's vendor library in one
    traced call's list ("kernel:NAME 12.3us"), or None."""
    keys = VENDOR["gemm" if case.startswith("gemm") else "attention"]
    best = None
    for k in kernels or []:
        kind, _, rest = k.partition(":")
        name, _, dur = rest.rpartition(" ")
        if kind != "kernel" or not dur.endswith("us") or not any(w in name.lower() for w in keys):
            continue
        us = float(dur[:-2])
        if best is None or us > best[1]:
            best = (name, us)
    return best


def kernel_table(cells) -> bool:
    """The vendor kernel per framework against pytorch's; True when every
    asserted pair is within TOL."""
    ok = True
    print(f"{'case':<46} {'framework':<14} {'vendor kernel':<58} {'us':>9} {'vs pytorch':>10}  verdict")
    for c in CASES:
        ref = vendor_kernel(c, cells.get((c, "pytorch"), {}).get("kernels"))
        if ref is None:
            print(f"{c:<46} {'pytorch':<14} {'(no vendor kernel recorded)':<58} {'-':>9} {'':>10}  FAIL")
            ok = False
            continue
        print(f"{c:<46} {'pytorch':<14} {ref[0][:58]:<58} {ref[1]:>9.1f} {'':>10}")
        for fw in ("jax", "jax-xla", "burnstyle-hip"):
            r = cells.get((c, fw))
            if r is None:
                continue
            if fw == "burnstyle-hip":
                if not r.get("median_ms"):
                    print(f"{'':<46} {fw:<14} {'(no sample: ' + str(r.get('message', ''))[:40] + ')':<58}")
                    ok = False
                    continue
                clock = "CUPTI span" if str(r.get("timing", "")).startswith("cupti-kernel-span") else "held-stream events"
                us, name, same = r["median_ms"] * 1e3, f"its sample: one cuBLAS call, {clock}", True
            else:
                k = vendor_kernel(c, r.get("kernels"))
                if k is None:
                    print(f"{'':<46} {fw:<14} {'(no vendor kernel: ' + str(r.get('status')) + ')':<58}")
                    ok &= fw == "jax-xla"
                    continue
                name, us = k
                same = name == ref[0]
            dev = us / ref[1] - 1
            if same and fw != "jax-xla":
                verdict = "PASS" if abs(dev) <= TOL else "FAIL"
                ok &= verdict == "PASS"
            else:
                verdict = "shown (another kernel)" if not same else "shown"
            print(f"{'':<46} {fw:<14} {name[:58]:<58} {us:>9.1f} {dev:>+10.1%}  {verdict}")
    return ok


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
    print("the vendor kernel through each framework's clock (asserted where it is the same kernel):")
    ok = kernel_table(cells)
    print("\neach framework's whole sample, median (not asserted: a framework's extra kernels are its cost):")
    print(f"{'case':<48} " + " ".join(f"{f:>14}" for f in FRAMEWORKS) + "   jax/pt  bh/pt  xla/pt")
    for c in CASES:
        ms = [cells.get((c, f), {}).get("median_ms") for f in FRAMEWORKS]
        devs = [m / ms[0] - 1 if m and ms[0] else float("nan") for m in ms[1:]]
        print(f"{c:<48} " + " ".join(f"{m:>11.4f} ms" if m else f"{'-':>14}" for m in ms)
              + "  " + " ".join(f"{d:+6.1%}" for d in devs))
    print("\nclocks (env.timing), the same call on the framework's own clock untraced, and the kernels:")
    for (c, f), r in sorted(cells.items()):
        own = r.get("own_clock_untraced_ms")
        print(f"  {f:<14} {c:<48} {str(r.get('timing', r.get('message', '')))[:100]}")
        if own:
            print(f"  {'':<14} own clock untraced: {own:.4f} ms; kernels: {'; '.join(r.get('kernels', []))[:240]}")
    for (c, f), r in sorted(cells.items()):
        if c not in CASES:
            print(f"\n{c}, {f}: {r['median_ms']} ms; clock: {r.get('timing', '')[:220]}")
    for f, what in (("burnstyle-hip-events", "on CUDA events, the stream held"),
                    ("burnstyle-hip-nohold", "on CUDA events without the stream hold")):
        for r in rows(os.path.join(d, f"{f}.jsonl")):
            if r.get("samples_ms"):
                print(f"\nburnstyle-hip {what}, {burnstyle_case(r)}: {statistics.median(r['samples_ms']):.4f} ms; "
                      f"clock: {r.get('env', {}).get('timing', '')[:120]}")
    print("\noverhead lines:")
    for r in extra:
        print("  " + json.dumps({k: (round(v, 5) if isinstance(v, float) else v) for k, v in r.items()}))
    print(f"\ncross-check (the same vendor kernel, one clock) within {TOL:.0%}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
