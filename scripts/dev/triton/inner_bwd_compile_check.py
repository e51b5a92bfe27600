"""Compile the inner loop's backward kernels (xbench_triton/inner_bwd.py,
xbench_triton/inner_bwd_mlp.py) and the forward kernels with SAVE (the states the
backward starts from) for sm_90 (an H100) on a machine without a GPU, at 125m's
shapes (f=64, K=16, 4f=256) and their launch settings, and report each
kernel's registers and spills as ptxas reports them.

    python scripts/dev/triton/inner_bwd_compile_check.py   (TRITON_INTERPRET unset)

env KERNELS: names (prefixes) to compile, default all; DTS: product dtypes,
default fp32 (in the model the inner loop's inputs are float32 in every run, so
its backward never multiplies in bf16), fp32,bf16 for both. A compiled kernel's
n_spills is only filled in when a driver loads it, so the spills are read from
ptxas -v, run the way Triton runs it for sm_90 (its ptxas-blackwell,
--regAllocOptLevel=2). Prints one line per kernel: "compile NAME: ok regs R
spill S B" (S = spill stores + loads); exits 1 if any fails to compile, 3 if
any stores more spills than it is allowed (none, but the forward mlp chain at
its measured float32 default: xbench_triton.ttt_mlp.spill_allowance).
plugins/triton/tests/test_triton_inner_bwd.py runs it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

# A development script of the triton backend (not part of it): plugins/_python
# (the contract xbench_py and the backend packages xbench_triton,
# xbench_pytorch, ...) goes first on the path, as benchmark.py puts it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLUGINS = os.path.join(ROOT, "plugins")
sys.path.insert(0, os.path.join(PLUGINS, "_python"))


import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from xbench_triton import inner_bwd as lin  # noqa: E402
from xbench_triton import inner_bwd_mlp as mlp  # noqa: E402
from xbench_triton import model as tm  # noqa: E402
from xbench_triton import ttt_mlp as tmlp  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
F, K = 64, 16
H = 4 * F
DTYPES = {"fp32": (tl.float32, torch.float32), "bf16": (tl.bfloat16, torch.bfloat16)}
INPUTS = ("XQ", "XK", "XV", "GATE")  # the inner loop's inputs, in the run's dtype; every other pointer is float32
INTS = ("NH", "L", "N", "NB")  # NB (the mlp chain's row tiles of W1): 2 at f=64, not specialised


def kernels(dt: str) -> list:
    """(name, kernel, constexprs, num_warps, num_stages) at 125m with the launchers' settings."""
    tdt, torch_dt = DTYPES[dt]
    nw, bc = lin.launch(F)
    mw, hc, mbc = mlp.launch(F)
    mc = dict(K=K, F=F, H=H, HC=hc, DT=tdt, C=tm.GELU_C)
    fw, fbc, fst, _ = tm.linear_launch(torch_dt, F)
    mlw, hb, bf, mst, _ = tmlp.mlp_launch(torch_dt, F, H)
    return [
        ("ttt_linear_bwd_pre", lin.ttt_linear_bwd_pre_kernel, dict(K=K, F=F, BC=bc, DT=tdt), nw, 3),
        ("ttt_linear_bwd_chain", lin.ttt_linear_bwd_chain_kernel, dict(K=K, F=F, BC=bc, DT=tdt), nw, 3),
        ("ttt_linear_bwd_post", lin.ttt_linear_bwd_post_kernel, dict(K=K, F=F, BC=bc, DT=tdt), nw, 3),
        ("ttt_mlp_bwd_pre", mlp.ttt_mlp_bwd_pre_kernel, dict(mc, BC=mbc), mw, 3),
        ("ttt_mlp_bwd_chain", mlp.ttt_mlp_bwd_chain_kernel, dict(mc, BC=mbc), mw, 3),
        ("ttt_mlp_bwd_post", mlp.ttt_mlp_bwd_post_kernel, mc, mw, 3),
        ("forward linear, SAVE", tm.ttt_linear_kernel, dict(K=K, F=F, BC=fbc, DT=tdt, FP=F, SAVE=True), fw, fst),
        ("forward mlp chain, SAVE", tmlp.ttt_mlp_chain_kernel,
         dict(K=K, F=F, FP=F, H=H, HP=H, HB=hb, BF=bf, DT=tdt, C=tm.GELU_C, SAVE=True), mlw, mst),
    ]


def source(fn, const: dict, dt: str) -> ASTSource:
    sig = {}
    for n in fn.arg_names:
        if n in const:
            sig[n] = "constexpr"
        elif n in INTS:
            sig[n] = "i32"
        else:
            sig[n] = "*" + (dt if n in INPUTS else "fp32")
    # pointers 16-byte aligned, as Triton specialises torch's allocations at run time
    attrs = {(i,): [["tt.divisibility", 16]] for i, n in enumerate(fn.arg_names) if sig[n].startswith("*")}
    return ASTSource(fn, sig, {(fn.arg_names.index(k),): v for k, v in const.items()}, attrs)


def ptxas_report(ptx: str) -> tuple[int, int]:
    """(registers, spill bytes stored, spill bytes loaded) from ptxas -v for sm_90a."""
    ptxas = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas-blackwell")
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        r = subprocess.run([ptxas, "-v", "--regAllocOptLevel=2", "--gpu-name=sm_90a", src, "-o",
                            os.path.join(d, "k.cubin")], capture_output=True, text=True, check=True)
    log = r.stdout + r.stderr
    regs = re.search(r"Used (\d+) registers", log)
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    if not regs or not spills:
        raise RuntimeError(f"ptxas -v said no register/spill line: {log[-400:]}")
    return int(regs.group(1)), int(spills.group(1)), int(spills.group(2))


def main() -> int:
    if os.environ.get("TRITON_INTERPRET") == "1":
        print("inner_bwd_compile_check: unset TRITON_INTERPRET (the interpreter does not compile)")
        return 2
    bad = spilled = 0
    only = [o for o in os.environ.get("KERNELS", "").split(",") if o]
    for dt in os.environ.get("DTS", "fp32").split(","):
        for name, fn, const, nw, ns in kernels(dt):
            if only and not any(name.startswith(o) for o in only):
                continue
            try:
                k = triton.compile(source(fn, const, dt), target=TARGET, options={"num_warps": nw, "num_stages": ns})
                regs, stores, loads = ptxas_report(k.asm["ptx"])
                allowed = tmlp.spill_allowance("mlp chain", DTYPES[dt][1], F) if "mlp chain" in name else 0
                spilled += stores > allowed
                print(f"compile {name} {dt}: ok regs {regs} spill {stores + loads} B (allowed stores {allowed} B; "
                      f"num_warps {nw}, smem {k.metadata.shared} B)", flush=True)
            except Exception as e:  # noqa: BLE001 - report every kernel
                bad += 1
                print(f"compile {name} {dt}: FAIL {type(e).__name__}: {' '.join(str(e).split())[:400]}", flush=True)
    return 1 if bad else 3 if spilled else 0


if __name__ == "__main__":
    sys.exit(main())
