#!/usr/bin/env python3
"""xbench's KernelBench baseline beside KernelBench's published one (issue 26).

Reads what scripts/h100-kernelbench.sh wrote under OUT and writes, under
DEST, xbench's own outputs only (never KernelBench's files):
  DEST/baseline_time_torch.json              xbench's baseline, kernelbench convention
  DEST/baseline_time_torch_strict-ieee.json  the same problems under strict-ieee (if run)
  DEST/comparison.md                         the tables below, with provenance
and prints comparison.md. Usage:
  python3 scripts/kernelbench_compare.py OUT KBDIR DEST [--tolerance 0.06] [--script NAME]

Tables: per problem the published mean, xbench's mean, their ratio and
whether it is within the tolerance (and the strict-ieee mean beside them);
the candidates' gate, time and speedups; the out-of-memory containment check
(a normal problem alone, and after an oversized one in the same run). Means
are the baseline files' (xbench writes them from its statistics of the
samples); candidate and oom-check numbers come from `xbench export --format
csv`, which recomputes them from the samples on read.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys

# Outliers whose cause is known, by "level/file". A line says what changed.
KNOWN = {
    "level1/12_Matmul_with_diagonal_matrices_.py":
        "the problem changed upstream after the baseline was timed: KernelBench b6c5259 (2026-01-19) computes "
        "A.unsqueeze(1) * B instead of torch.diag(A) @ B; its H100_Modal baseline is from 1f8d20f (2025-12-31)",
}


def read_json(path: str):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_csv(path: str) -> list:
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


def pid(name: str) -> int:
    return int(name.split("_", 1)[0])


def problems_of(folder: str, ids: range) -> list:
    """(level key, file name) of every problem file with an id in ids, in order."""
    out = []
    for lv in (1, 2):
        d = os.path.join(folder, f"level{lv}")
        names = sorted((n for n in os.listdir(d) if n.endswith(".py") and n.split("_")[0].isdigit()), key=pid)
        out += [(f"level{lv}", n) for n in names if pid(n) in ids]
    return out


def fmt(x, digits=3) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


def cause(key, p, o, cold, warm) -> str:
    """Why a problem is outside the tolerance, from what was measured: a known
    upstream change, this machine (KernelBench's own method reads it off here
    too), or host dispatch between the call's kernels (hidden by KernelBench's
    asynchronous L2 write, in xbench's sample, which starts on an idle device)."""
    if key in KNOWN:
        return KNOWN[key]
    if o is None:
        return "not timed by xbench"
    if p is None:
        return "not in the published baseline"
    if cold is None:
        return "cause not known"
    measured = (f"KernelBench's own method on this H100 reads {cold:.3g} ms cold ({cold / p:.3g}x the published "
                f"mean){'' if warm is None else f' and {warm:.3g} ms warm'}; xbench {o / cold:.3g}x its cold")
    if abs(o / cold - 1) <= 0.03:
        return f"this H100 and its software, not the timer: {measured}"
    if warm is not None and warm / cold > 1.02:
        return (f"host dispatch between the call's kernels, which KernelBench's trial hides behind its asynchronous "
                f"L2 write (the host runs ahead) and xbench's sample, starting on an idle device, keeps: {measured}")
    return (f"partly this H100, partly xbench's sample starting on an idle device (the dispatch KernelBench's "
            f"asynchronous L2 write hides): {measured}")


def baseline_table(problems, published, ours, strict, tol, method_cold=None, method_warm=None) -> tuple:
    method_cold, method_warm = method_cold or {}, method_warm or {}
    rows, within, outliers = [], 0, []
    head = ("| level | problem | published mean ms | xbench mean ms | xbench / published | within "
            f"{tol:.0%} | KernelBench's method here, cold | warm | strict-ieee mean ms | strict-ieee / published | note |")
    rows.append(head)
    rows.append("|" + "---|" * 11)
    for lv, name in problems:
        p = (published.get(lv) or {}).get(name, {}).get("mean")
        o = (ours.get(lv) or {}).get(name, {}).get("mean")
        s = (strict.get(lv) or {}).get(name, {}).get("mean")
        ratio = o / p if o and p else None
        ok = ratio is not None and abs(ratio - 1) <= tol
        within += ok
        mc, mw = (method_cold.get(lv) or {}).get(name), (method_warm.get(lv) or {}).get(name)
        note = ""
        if not ok:
            key = f"{lv}/{name}"
            note = cause(key, p, o, mc, mw)
            outliers.append(f"{key}: {fmt(ratio)}x, {note}")
        rows.append(f"| {lv} | {name} | {fmt(p)} | {fmt(o)} | {fmt(ratio)} | {'yes' if ok else 'NO'} | {fmt(mc)} | "
                    f"{fmt(mw)} | {fmt(s)} | {fmt(s / p if s and p else None)} | {note} |")
    return rows, within, outliers


def candidates_table(cands: list, ours: dict, published: dict) -> list:
    rows = ["| problem | status | candidate mean ms | xbench eager mean ms | speedup vs xbench eager | "
            "published mean ms | speedup vs published | message |", "|" + "---|" * 8]
    for r in cands:
        if r.get("status") == "unsupported":
            continue  # no candidate file for that problem
        lv, name = f"level{r.get('level')}", problem_name(r)
        mean = float(r["mean_ms"]) if r.get("mean_ms") else None
        eager = (ours.get(lv) or {}).get(name, {}).get("mean")
        pub = (published.get(lv) or {}).get(name, {}).get("mean")
        msg = (r.get("message") or "").replace("|", "/")[:160]
        rows.append(f"| {lv}/{name} | {r.get('status')} | {fmt(mean)} | {fmt(eager)} | "
                    f"{fmt(eager / mean if eager and mean else None)} | {fmt(pub)} | "
                    f"{fmt(pub / mean if pub and mean else None)} | {msg} |")
    return rows


def problem_name(r: dict) -> str:
    folder, lv, p = r.get("problems", ""), r.get("level", ""), r.get("problem", "")
    try:
        for n in os.listdir(os.path.join(folder, f"level{lv}")):
            if n.endswith(".py") and n.split("_")[0] == p:
                return n
    except OSError:
        pass
    return p


def oom_table(alone: list, pair: list) -> tuple:
    rows = ["| run | problem | status | mean ms | message |", "|---|---|---|---|---|"]
    by = {}
    for label, rs in (("alone", alone), ("after the oversized one", pair)):
        for r in sorted(rs, key=lambda r: int(r.get("problem") or 0)):
            name = problem_name(r)
            mean = float(r["mean_ms"]) if r.get("mean_ms") else None
            by[(label, name)] = (r.get("status"), mean)
            msg = (r.get("message") or "").replace("|", "/")[:120]
            rows.append(f"| {label} | {name} | {r.get('status')} | {fmt(mean)} | {msg} |")
    a, b = by.get(("alone", "2_big_relu.py")), by.get(("after the oversized one", "2_big_relu.py"))
    o = by.get(("after the oversized one", "1_oversized.py"))
    verdict = "oom check: not run"
    if a and b and o:
        ratio = b[1] / a[1] if a[1] and b[1] else None
        good = o[0] == "oom" and b[0] == "ok" and ratio is not None and abs(ratio - 1) <= 0.1
        verdict = (f"oom check: {'PASS' if good else 'FAIL'}: 1_oversized {o[0]}, then 2_big_relu {b[0]} at "
                   f"{fmt(b[1])} ms against {fmt(a[1])} ms alone ({fmt(ratio)}x; within 10% is normal)")
    return rows, verdict


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="the output folder of scripts/h100-kernelbench.sh")
    ap.add_argument("kb", help="the KernelBench checkout (KernelBench/level1, results/timing/...)")
    ap.add_argument("dest", help="folder for xbench's baseline files and comparison.md")
    ap.add_argument("--tolerance", type=float, default=0.06)
    ap.add_argument("--hardware", default="H100_Modal", help="the published baseline's folder under results/timing")
    ap.add_argument("--script", default="scripts/h100-kernelbench.sh")
    ap.add_argument("--problems", default="", help="the problem set compared (default KBDIR/KernelBench)")
    ap.add_argument("--method-cold", default="", help="scripts/kernelbench_method_timer.py's JSON (cold, its default)")
    ap.add_argument("--method-warm", default="", help="the same with --warm")
    ap.add_argument("--commit", default="", help="xbench's commit, where the results do not carry it")
    a = ap.parse_args(argv)
    if not (0 <= a.tolerance < 1):
        ap.error(f"--tolerance {a.tolerance} is not allowed (allowed: 0 <= t < 1)")
    pub_path = os.path.join(a.kb, "results", "timing", a.hardware, "baseline_time_torch.json")
    published = read_json(pub_path)
    ours = read_json(os.path.join(a.out, "timing", "baseline_time_torch.json"))
    if published is None or ours is None:
        print(f"kernelbench_compare: need {pub_path} and {a.out}/timing/baseline_time_torch.json", file=sys.stderr)
        return 2
    strict = read_json(os.path.join(a.out, "timing", "baseline_time_torch_strict-ieee.json")) or {}
    problems = problems_of(a.problems or os.path.join(a.kb, "KernelBench"), range(1, 21))
    method_cold = read_json(a.method_cold) if a.method_cold else None
    method_warm = read_json(a.method_warm) if a.method_warm else None
    rows, within, outliers = baseline_table(problems, published, ours, strict, a.tolerance, method_cold, method_warm)
    cands = read_csv(os.path.join(a.out, "candidates.csv"))
    oom_rows, verdict = oom_table(read_csv(os.path.join(a.out, "oom-alone.csv")),
                                  read_csv(os.path.join(a.out, "oom-pair.csv")))
    any_ours = next((e for lv in ours.values() for e in lv.values()), {})
    any_pub = next((e for lv in published.values() for e in lv.values()), {})
    commit = a.commit or next((r.get("git_commit") for r in read_csv(os.path.join(a.out, "baseline.csv"))
                               if r.get("git_commit")), "unknown")
    kb_commit = (open(os.path.join(a.kb, "KERNELBENCH_COMMIT")).read().strip()
                 if os.path.exists(os.path.join(a.kb, "KERNELBENCH_COMMIT")) else "unknown")
    md = [
        "# xbench's KernelBench baseline beside KernelBench's published H100 baseline",
        "",
        f"Made by `{a.script}` and `scripts/kernelbench_compare.py` at xbench commit `{commit}`, on "
        f"{any_ours.get('hardware', '?')} ({any_ours.get('device', '?')}). The problems are KernelBench's own "
        f"level1 and level2 files with ids 1-20, unmodified (KernelBench commit `{kb_commit}`); the published "
        f"baseline is its `results/timing/{a.hardware}/baseline_time_torch.json` ({any_pub.get('hardware', '?')}). "
        "Neither is copied here: this folder holds xbench's outputs only.",
        "",
        "xbench timed each problem eagerly (`xbench problems baseline --backends pytorch`, 3 warm-up calls, 100 "
        "timed calls, each after a 256 MiB L2 write as KernelBench does, the model in training mode as KernelBench "
        "leaves it; the sample is the device span of the call's kernels, docs/protocol.md) under `--precision kernelbench` (PyTorch's defaults: cuDNN TF32 on, matmul "
        "TF32 off, as KernelBench times), and the level 2 problems again under `--precision strict-ieee` (TF32 "
        "off everywhere). Means in ms. The columns \"KernelBench's method here\" are "
        "`scripts/kernelbench_method_timer.py` in the same session: KernelBench's documented trial written out "
        "(an asynchronous 256 MiB write, events around the call, 3 warm-ups, the first trial dropped, 100 kept), "
        "cold as KernelBench times, and warm with no write.",
        "",
        f"**{within} of {len(problems)} problems within {a.tolerance:.0%}** of the published mean.",
        "",
    ]
    if outliers:
        md += ["Outside it:", ""] + [f"- {o}" for o in outliers] + [""]
    md += rows + ["", "## Candidates (xbench's own ModelNew files, problems/candidates/kernelbench)", ""]
    md += candidates_table(cands, ours, published) if cands else ["(not run)"]
    md += ["", "## Out-of-memory containment", "",
           "scripts/testdata/oom-then-normal: `1_oversized.py` holds 60% of the device and asks for 120%; "
           "`2_big_relu.py` needs half of it. Timed alone, then both in one `problems baseline` run.", ""]
    md += oom_rows + ["", verdict, ""]
    text = "\n".join(md)
    os.makedirs(a.dest, exist_ok=True)
    with open(os.path.join(a.dest, "comparison.md"), "w") as f:
        f.write(text)
    for name in ("baseline_time_torch.json", "baseline_time_torch_strict-ieee.json"):
        src = os.path.join(a.out, "timing", name)
        if os.path.exists(src):
            shutil.copyfile(src, os.path.join(a.dest, name))
    print(text)
    print(f"\nsummary: {within}/{len(problems)} within {a.tolerance:.0%}; {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
