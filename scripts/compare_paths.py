"""Per-cell agreement of two sweep folders of the same cells (issue 29's
check: the serial path against --compile-ahead). Prints each cell's
median ratio (second / first), how many agree within 3%, and the cells
that do not, each marked with whether both ran the same autotuned kernel
(triton's env.settings.autotune_config, jax's xla_kernel; "-" where the
result does not say): a different pick is the autotuner's, not the path's.
Usage: python3 scripts/compare_paths.py OLD_DIR NEW_DIR"""

import json
import os
import statistics
import sys

from results_files import result_files


def medians(folder):
    out = {}
    for f, raw in result_files(folder, "*.json"):
        if os.path.basename(f).startswith("_"):
            continue
        r = json.loads(raw)
        if r.get("status") == "ok" and r.get("samples_ms"):
            settings = r.get("env", {}).get("settings", {})
            out[os.path.basename(f)[:-5]] = (statistics.median(r["samples_ms"]), r.get("compile_ms", 0.0),
                                              r.get("env", {}).get("timing", "").split(":")[0],
                                              settings.get("autotune_config") or settings.get("xla_kernel"))
    return out


def main(old_dir, new_dir, tol=0.03):
    old, new = medians(old_dir), medians(new_dir)
    keys = sorted(set(old) & set(new))
    if not keys:
        print("no cell finished ok in both folders")
        return 1
    ratios = {k: new[k][0] / old[k][0] for k in keys}
    bad = [k for k in keys if abs(ratios[k] - 1) > tol]
    clocks = sorted({old[k][2] for k in keys} | {new[k][2] for k in keys})
    print(f"{len(keys)} cells in both ({len(old)} old ok, {len(new)} new ok); clocks: {', '.join(clocks)}")
    print(f"within {tol:.0%}: {len(keys) - len(bad)} of {len(keys)}; median ratio new/old "
          f"{statistics.median(ratios.values()):.4f}, min {min(ratios.values()):.4f}, max {max(ratios.values()):.4f}")
    by_backend = {}
    for k in keys:
        by_backend.setdefault(k.split("__")[0], []).append(ratios[k])
    for b, rs in sorted(by_backend.items()):
        inside = sum(abs(r - 1) <= tol for r in rs)
        print(f"  {b:16s} {inside}/{len(rs)} within, median {statistics.median(rs):.4f}; "
              f"compile_ms old median {statistics.median(old[k][1] for k in keys if k.startswith(b + '__')):.0f}, "
              f"new {statistics.median(new[k][1] for k in keys if k.startswith(b + '__')):.0f}")
    def pick(k):
        if old[k][3] is None or new[k][3] is None:
            return "-"
        return "same kernel" if old[k][3] == new[k][3] else "different kernel"
    same = [k for k in keys if pick(k) == "same kernel"]
    if same:
        inside = sum(abs(ratios[k] - 1) <= tol for k in same)
        print(f"cells that ran the same autotuned kernel in both: {inside} of {len(same)} within {tol:.0%}")
    for k in bad:
        print(f"  outside: {k} old {old[k][0]:.4f} ms new {new[k][0]:.4f} ms ratio {ratios[k]:.4f} ({pick(k)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
