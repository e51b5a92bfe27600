#!/usr/bin/env python3
"""An independent timer of KernelBench problems, following KernelBench's
documented baseline method, to check xbench's `problems baseline` against
on the same GPU in the same session (issue 26).

KernelBench's eager baseline (its timing module, "cuda_event" method, as its
baseline scripts call it) is, per trial: synchronize; write a 256 MiB buffer
(cold L2); record a start event; call the model; record an end event;
synchronize; elapsed time. 3 warm-up calls first, the first trial discarded,
100 trials kept, the mean reported. PyTorch's precision flags are left at
their defaults. This file is written from that description; no KernelBench
code is copied or imported. It times each problem file of KBDIR/level<N>/
with an id in --ids and prints one JSON object, {"level1": {"<file>": mean
ms, ...}, ...}, on stdout.

  python3 scripts/kernelbench_method_timer.py KBDIR --levels 1,2 --ids 1-20 [--warm]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys


def parse_ids(text: str) -> set:
    lo, _, hi = text.partition("-")
    return set(range(int(lo), int(hi or lo) + 1))


def load(path: str):
    spec = importlib.util.spec_from_file_location("kb_problem", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def to_cuda(x):
    import torch

    return x.cuda() if isinstance(x, torch.Tensor) else x


def time_problem(path: str, trials: int, warmup: int, cold: bool) -> float:
    import torch

    mod = load(path)
    torch.manual_seed(42)
    model = mod.Model(*mod.get_init_inputs()).cuda()
    inputs = [to_cuda(x) for x in mod.get_inputs()]
    flush = torch.empty(32 << 20, dtype=torch.int64, device="cuda") if cold else None
    with torch.no_grad():
        for _ in range(warmup):
            model(*inputs)
        torch.cuda.synchronize()
        times = []
        for trial in range(trials + 1):  # the first trial is discarded
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if flush is not None:
                flush.fill_(trial)
            start.record()
            model(*inputs)
            end.record()
            torch.cuda.synchronize()
            if trial:
                times.append(start.elapsed_time(end))
    del model, inputs, flush
    torch.cuda.empty_cache()
    return sum(times) / len(times)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("kbdir", help="folder holding level1/, level2/, ... (KernelBench/ of a checkout)")
    p.add_argument("--levels", default="1,2")
    p.add_argument("--ids", default="1-20", help="LO-HI problem ids")
    p.add_argument("--trials", type=int, default=100)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--warm", action="store_true", help="skip the L2 write before each trial")
    a = p.parse_args()
    ids = parse_ids(a.ids)
    out = {}
    for lv in a.levels.split(","):
        folder = os.path.join(a.kbdir, f"level{lv}")
        for name in sorted(os.listdir(folder), key=lambda n: int(n.split("_", 1)[0]) if n[0].isdigit() else 0):
            if not name.endswith(".py") or not name[0].isdigit() or int(name.split("_", 1)[0]) not in ids:
                continue
            try:
                ms = time_problem(os.path.join(folder, name), a.trials, a.warmup, not a.warm)
            except Exception as e:  # one problem's failure is a line, not the end of the set
                print(f"level{lv}/{name}: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            out.setdefault(f"level{lv}", {})[name] = ms
            print(f"level{lv}/{name}: {ms:.4f} ms", file=sys.stderr, flush=True)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
