"""The backend's modules compiled for GPUs this machine does not have (AMD
MI300X gfx942, MI250 gfx90a, RX 6800 gfx1030; NVIDIA sm_80, what the H100
runs): an executable comes out, for the named chip, and a bfloat16 matmul
uses the matrix cores (MFMA on gfx942 and gfx90a, mma.sync on sm_80).
Compiled, never run: no AMD card is involved. One session fixture compiles
everything once, two compiles at a time."""

import glob
import os
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

import iree.compiler as ic
from xbench_iree import mlir as iree_mlir
from xbench_iree import targets as iree_targets

AMD = ("gfx942", "gfx90a", "gfx1030")
GEMM = ("gemm", iree_mlir.gemm(128, 192, 256, 1, "nt", "bfloat16"))
ATTENTION = ("attention", iree_mlir.attention(1, 4, 2, 64, 64, 64, True, "bfloat16"))


def _compile(target, what, mlir, out):
    d = os.path.join(out, f"{target.name}-{what}")
    flags = list(target.flags) + [f"--iree-hal-dump-executable-intermediates-to={d}",
                                  f"--iree-hal-dump-executable-binaries-to={d}"]
    return ic.compile_str(target.source(mlir), extra_args=flags), d


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("iree-targets"))
    jobs = [(iree_targets.rocm(a), w, m) for a in AMD for w, m in (GEMM, ATTENTION)]
    jobs.append((iree_targets.cuda("sm_80"), *GEMM))
    with ThreadPoolExecutor(max_workers=2) as pool:  # each compile is an iree-compile process
        futures = {(t.name, w): pool.submit(_compile, t, w, m, out) for t, w, m in jobs}
    return {k: f.result() for k, f in futures.items()}


def _read(d, pattern):
    files = glob.glob(os.path.join(d, pattern))
    assert files, f"no {pattern} in {d}: {os.listdir(d)}"
    with open(files[0], "rb") as f:
        return f.read()


@pytest.mark.parametrize("arch", AMD)
@pytest.mark.parametrize("what", ["gemm", "attention"])
def test_amd_executable_for_the_chip(built, arch, what):
    vmfb, d = built[(arch, what)]
    # a .vmfb: a zip-framed VM flatbuffer (module.fb, file identifier IREE)
    assert vmfb[:4] == b"PK\x03\x04" and b"IREE" in vmfb[:256], "not an IREE VM module"
    assert _read(d, "*.hsaco")[:4] == b"\x7fELF"
    asm = _read(d, "*.rocmasm").decode()
    assert re.search(rf'\.amdgcn_target "[^"]*{arch}', asm), f"assembly is not for {arch}"


@pytest.mark.parametrize("arch,mfma", [("gfx942", "v_mfma_f32_16x16x16_bf16"), ("gfx90a", "v_mfma_f32_16x16x8bf16")])
def test_bf16_matmul_uses_mfma(built, arch, mfma):
    asm = _read(built[(arch, "gemm")][1], "*.rocmasm").decode()
    seen = sorted(set(re.findall(r"v_mfma\w*", asm)))
    assert mfma in asm, f"{arch}: no {mfma}; mfma seen: {seen}"


def test_gfx1030_has_no_matrix_cores(built):
    # RDNA2 has neither MFMA nor WMMA: the bf16 matmul is plain vector code.
    asm = _read(built[("gfx1030", "gemm")][1], "*.rocmasm").decode()
    assert not re.search(r"v_(mfma|wmma)", asm)


def test_sm80_ptx_is_ampere_mma_not_wgmma(built):
    # What the H100 runs: IREE 3.13 knows no Hopper target and emits Ampere's
    # mma.sync, never Hopper's wgmma (xbench_iree/targets.py).
    vmfb, d = built[("sm_80", "gemm")]
    ptx = _read(d, "*.ptx").decode()
    assert ".target sm_80" in ptx
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in ptx
    assert "wgmma" not in ptx


def test_stated_targets_wrap_the_module():
    for t in (iree_targets.cuda("sm_90a"), iree_targets.rocm("gfx1030")):
        src = t.source(GEMM[1])
        assert t.flags == () and src.count("hal.device.targets") == 1
        assert src.index("#amap") < src.index("module attributes"), "affine aliases must stay at the top level"
