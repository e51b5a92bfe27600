"""Compile the TTT inner-loop kernels (xbench_triton/model.py, xbench_triton/ttt_mlp.py) for
sm_90 (an H100) on a machine without a GPU, and print per kernel the
registers a thread and the spill bytes as ptxas reports them for that very
compile. The interpreter the CPU tests use accepts code the compiler refuses,
and says nothing about registers: this is the CPU's check of both.

    python scripts/dev/triton/ttt_compile_check.py            (TRITON_INTERPRET unset)
    python scripts/dev/triton/ttt_compile_check.py --sweep    mlp chain launch settings

By default it compiles every kernel with the launch settings ttt_inner
would use (the XBENCH_TRITON_* overrides apply), float32 and bfloat16, at
f=64 (125m, 350m, 1b) and f=96 (760m, padded to 128), and exits 1 if one
fails to compile or spills more than MAX_SPILL bytes. --sweep prints the mlp
chain kernel's registers and spills for a grid of (num_warps, HB, BF) and
checks nothing. tests/test_triton.py runs the default.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import time

# A development script of the triton backend (not part of it): plugins/_python
# (the contract xbench_py and the backend packages xbench_triton,
# xbench_pytorch, ...) goes first on the path, as benchmark.py puts it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLUGINS = os.path.join(ROOT, "plugins")
sys.path.insert(0, os.path.join(PLUGINS, "_python"))


import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton import knobs  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from xbench_triton import model as tm  # noqa: E402
from xbench_triton import ttt_mlp as tmlp  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
MAX_SPILL = 0  # bytes of spill stores a kernel may have, beyond tmlp.spill_allowance
K = 16
DTYPES = {"fp32": (torch.float32, tl.float32), "bf16": (torch.bfloat16, tl.bfloat16)}
ACTIVATIONS = ("XQ", "XK", "XV", "GATE")  # in the run's dtype; every other pointer is float32
SCALARS = ("NH", "L", "N", "NB")  # NB: >1 here, as a launch with 1 would be specialised


def source(fn, const: dict, dt: str) -> ASTSource:
    sig = {}
    const = dict(const)
    for p in fn.params:  # a constexpr left out takes its default, as at a launch
        if p.is_constexpr and p.name not in const:
            if not p.has_default:
                raise ValueError(f"{fn.__name__}: no value for constexpr {p.name}")
            const[p.name] = p.default
    for n in fn.arg_names:
        if n in const:
            sig[n] = "constexpr"
        elif n in SCALARS:
            sig[n] = "i32"
        else:
            sig[n] = "*" + (dt if n in ACTIVATIONS else "fp32")
    # 16-byte-aligned pointers, as Triton specialises them at run time.
    attrs = {(i,): [["tt.divisibility", 16]] for i, n in enumerate(fn.arg_names) if sig[n].startswith("*")}
    return ASTSource(fn, sig, {(fn.arg_names.index(k),): v for k, v in const.items()}, attrs)


def compile_and_report(src: ASTSource, options: dict) -> tuple:
    """(registers, spill store bytes, spill load bytes, shared memory bytes):
    the first three from ptxas's -v log of this compile, which Triton prints
    when its dump_ptxas_log knob is set."""
    log, old = io.StringIO(), (knobs.nvidia.dump_ptxas_log, knobs.compilation.always_compile)
    # always_compile: a kernel from Triton's cache comes without a ptxas run
    knobs.nvidia.dump_ptxas_log, knobs.compilation.always_compile = True, True
    try:
        with contextlib.redirect_stdout(log):
            kernel = triton.compile(src, target=TARGET, options=options)
    finally:
        knobs.nvidia.dump_ptxas_log, knobs.compilation.always_compile = old
    text = log.getvalue()
    regs = re.search(r"Used (\d+) registers", text)
    spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text)
    if not (regs and spill):
        raise RuntimeError(f"no ptxas report in: {text[-300:]!r}")
    return int(regs.group(1)), int(spill.group(1)), int(spill.group(2)), kernel.metadata.shared


def kernels(f: int, dt: str) -> list:
    """(name, kernel, constexprs, options) for what ttt_inner launches at head dim f."""
    tdt, ldt = DTYPES[dt]
    fp, hidden = tmlp.pow2_at_least_16(f), 4 * f
    nw, bc, st, onw = tm.linear_launch(tdt, fp)
    mw, hb, bf, mst, mow = tmlp.mlp_launch(tdt, fp, hidden)
    hp = triton.cdiv(hidden, hb) * hb
    mlp = dict(K=K, F=f, FP=fp, HP=hp, HB=hb, DT=ldt, C=tmlp.GELU_C)
    chain = dict(mlp, H=hidden, BF=bf, **({"NB": 1} if triton.cdiv(f, bf) == 1 else {}))  # a launch specialises NB == 1
    return [
        (f"linear chain w{nw} BC{bc}", tm.ttt_linear_kernel, dict(K=K, F=f, BC=bc, DT=ldt, FP=fp),
         {"num_warps": nw, "num_stages": st}),
        (f"linear out w{onw}", tm.ttt_linear_out_kernel, dict(K=K, F=f, DT=ldt, FP=fp), {"num_warps": onw}),
        (f"mlp chain w{mw} HB{hb} BF{bf}", tmlp.ttt_mlp_chain_kernel, chain,
         {"num_warps": mw, "num_stages": mst}),
        (f"mlp out w{mow} HB{hb}", tmlp.ttt_mlp_out_kernel, mlp, {"num_warps": mow}),
    ]


def check() -> int:
    bad = 0
    for f in (64, 96):
        for dt in DTYPES:
            for name, fn, const, options in kernels(f, dt):
                head, t = f"f{f} {dt} {name}:", time.time()
                try:
                    regs, st, ld, smem = compile_and_report(source(fn, const, dt), options)
                    over = st > MAX_SPILL + tmlp.spill_allowance(name.split(" w")[0], DTYPES[dt][0], tmlp.pow2_at_least_16(f))
                    bad += over
                    print(f"{head} regs {regs} spill stores {st} B loads {ld} B smem {smem / 1024:.1f} KiB"
                          f"{' OVER' if over else ''} "
                          f"[{time.time() - t:.0f} s]", flush=True)
                except Exception as e:  # noqa: BLE001 - report every kernel
                    bad += 1
                    print(f"{head} FAIL {type(e).__name__}: {' '.join(str(e).split())[:400]}", flush=True)
    return 1 if bad else 0


def sweep() -> None:
    for f in (64, 96):
        fp, hidden = tmlp.pow2_at_least_16(f), 4 * f
        for dt, (_, ldt) in DTYPES.items():
            for nw in (4, 8):
                for hb in (16, 32, 64):
                    for bf in (16, 32, 64):
                        if bf > fp:
                            continue
                        hp = triton.cdiv(hidden, hb) * hb
                        const = dict(K=K, F=f, FP=fp, H=hidden, HP=hp, HB=hb, BF=bf, DT=ldt, C=tmlp.GELU_C,
                                     **({"NB": 1} if triton.cdiv(f, bf) == 1 else {}))
                        try:
                            r = compile_and_report(source(tmlp.ttt_mlp_chain_kernel, const, dt),
                                                   {"num_warps": nw, "num_stages": 1})
                            print(f"f{f} {dt} mlp chain w{nw} HB{hb} BF{bf}: regs {r[0]} spill {r[1]}/{r[2]} B "
                                  f"smem {r[3] / 1024:.1f} KiB",
                                  flush=True)
                        except Exception as e:  # noqa: BLE001
                            print(f"f{f} {dt} w{nw} HB{hb} BF{bf}: FAIL {type(e).__name__}: {str(e)[:200]}")


if __name__ == "__main__":
    if os.environ.get("TRITON_INTERPRET") == "1":
        print("ttt_compile_check: unset TRITON_INTERPRET (the interpreter does not compile)")
        sys.exit(2)
    if "--sweep" in sys.argv[1:]:
        sweep()
        sys.exit(0)
    sys.exit(check())
