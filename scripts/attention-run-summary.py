#!/usr/bin/env python3
"""The attention device scripts' run summary (h100-wgmma.sh, h100-attn-bwd.sh):
the newest `xbench run` folder under DIR, a row per backend with its median
and its throughput as a multiple of REF's, burnstyle-hip rows also of
ALSO's when given, and the kernel each burnstyle-hip cell ran
(env.settings.attention_kernel).

    attention-run-summary.py DIR REF [ALSO]
"""
import glob
import json
import statistics
import sys


def main(folder, ref_name, also_name=None):
    rows = []
    runs = sorted(glob.glob(folder + "/*/"))  # run folders are named by start time: the last is this run's
    for f in sorted(glob.glob(runs[-1] + "*.json") if runs else []):
        try:
            r = json.load(open(f))
        except (ValueError, OSError):
            continue
        if "backend" not in r:
            continue
        name = r["backend"] + ("/" + r["variant"] if r.get("variant") else "")
        s = r.get("samples_ms") or []
        env = r.get("env", {})
        rows.append((name, r.get("status"), statistics.median(s) if s else None,
                     (env.get("settings") or {}).get("attention_kernel", ""), r.get("message", "")))
    ref = next((m for n, _, m, _, _ in rows if n == ref_name and m), None)
    also = next((m for n, _, m, _, _ in rows if n == also_name and m), None) if also_name else None
    for n, st, m, kernel, msg in rows:
        ratio = f"{ref / m:.2f}x of {ref_name}'s throughput" if ref and m else ""
        if also and m and n.startswith("burnstyle-hip"):
            ratio += f", {also / m:.2f}x of {also_name}'s"
        print(f"  {n:28s} {st:10s} {m if m is None else round(m, 3)!s:>8} ms  {ratio}")
        if n.startswith("burnstyle-hip"):
            print("      kernel: " + (kernel or "(not recorded) " + msg[:200]))
        elif st != "ok":
            print("      " + msg[:200])
    if not rows:
        print("  no run results under " + folder)


if __name__ == "__main__":
    main(*sys.argv[1:4])
