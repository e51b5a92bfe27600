"""Compile every scan kernel of xbench_triton/scan.py for sm_90 (an H100) on a
machine without a GPU: the interpreter the CPU tests use accepts code the
compiler refuses (a plain Python global read inside a kernel is one), so
this is the CPU's check that the kernels compile at all.

    python scripts/dev/triton/scan_compile_check.py   (TRITON_INTERPRET unset)

Prints one line per kernel; exits 1 if any fails. plugins/triton/tests/test_triton_scan.py runs it.
"""

from __future__ import annotations

import os
import sys

# A development script of the triton backend (not part of it): plugins/_python
# (the contract xbench_py and the backend packages xbench_triton,
# xbench_pytorch, ...) goes first on the path, as benchmark.py puts it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLUGINS = os.path.join(ROOT, "plugins")
sys.path.insert(0, os.path.join(PLUGINS, "_python"))


import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from xbench_triton import scan as ts  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
# One configuration a kernel variant: the grid's largest tiles and a small one.
CONFIGS = [
    ("forward log, alpha stored", ts._scan_fwd, dict(KP=32, CP=16, MAX=False, ENTROPY=False, STORE=True), "fp32"),
    ("forward max", ts._scan_fwd, dict(KP=8, CP=4, MAX=True, ENTROPY=False, STORE=False), "fp32"),
    ("forward entropy", ts._scan_fwd, dict(KP=8, CP=4, MAX=False, ENTROPY=True, STORE=False), "fp32"),
    ("forward log float64", ts._scan_fwd, dict(KP=32, CP=16, MAX=False, ENTROPY=False, STORE=True), "fp64"),
    ("backward log", ts._scan_bwd_log, dict(KP=32, R=64, CP=16), "fp32"),
    ("backward max", ts._scan_bwd_max, dict(KP=32, CP=16), "fp32"),
]


def source(fn, const: dict, dt: str) -> ASTSource:
    sig = {}
    for n in fn.arg_names:
        if n in const:
            sig[n] = "constexpr"
        elif n.endswith("_ptr"):
            sig[n] = "*i64" if n == "len_ptr" else "*" + dt
        else:
            sig[n] = "i32"
    return ASTSource(fn, sig, {(fn.arg_names.index(k),): v for k, v in const.items()})


def main() -> int:
    if os.environ.get("TRITON_INTERPRET") == "1":
        print("scan_compile_check: unset TRITON_INTERPRET (the interpreter does not compile)")
        return 2
    bad = 0
    for name, fn, const, dt in CONFIGS:
        try:
            triton.compile(source(fn, const, dt), target=TARGET, options={"num_warps": 1})
            print(f"compile {name}: ok")
        except Exception as e:  # noqa: BLE001 - report every kernel
            bad += 1
            print(f"compile {name}: FAIL {type(e).__name__}: {' '.join(str(e).split())[:400]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
