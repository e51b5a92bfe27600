"""The torch backends' dtypes through xbench_py.dtypes: every name resolves
to the torch dtypes the backends' own maps held before the table (written
out here), the precision flags follow the name, the capabilities are the
ones declared before, and a name without a torch form is refused by name."""

import pytest
import torch

from xbench_py import types as xt
from xbench_pytorch import backend, calibrate, gemm
from xbench_pytorch.model import torch_dtype

# name: (storage, result): model.DTYPES, gemm.STORE and gemm.OUT, attention's
# and scan's DTYPES as they were.
EXPECTED = {
    "float32": (torch.float32, torch.float32),
    "tf32": (torch.float32, torch.float32),
    "bfloat16": (torch.bfloat16, torch.bfloat16),
    "float16": (torch.float16, torch.float16),
    "float8_e4m3": (torch.float8_e4m3fn, torch.bfloat16),
    "float64": (torch.float64, torch.float64),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_resolved_dtypes_are_the_old_maps(name):
    assert (torch_dtype(name), torch_dtype(name, result=True)) == EXPECTED[name]


@pytest.mark.parametrize("name", xt.GEMM_DTYPES)
def test_gemm_store_and_out(name):
    assert (gemm.store_dtype(name), gemm.out_dtype(name)) == EXPECTED[name]


@pytest.mark.parametrize("bad", ["fp16", "float8", ""])
def test_unknown_name_raises_naming_it(bad):
    with pytest.raises(ValueError, match=f"unknown dtype {bad!r}"):
        torch_dtype(bad)


def test_a_torch_without_the_element_refuses_by_name(monkeypatch):
    monkeypatch.delattr(torch, "float8_e4m3fn")
    with pytest.raises(ValueError) as e:
        torch_dtype("float8_e4m3")
    msg = str(e.value)
    assert "'float8_e4m3'" in msg and "float8_e4m3fn" in msg
    assert "allowed: float32, tf32, bfloat16, float16, float64" in msg
    assert torch_dtype("float8_e4m3", result=True) == torch.bfloat16  # the result element still has its form


@pytest.fixture
def global_flags():
    """The process-wide matmul flags, put back as they were after the test."""
    m, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
    saved = (torch.get_float32_matmul_precision(), m.allow_tf32, cudnn.allow_tf32,
             m.allow_bf16_reduced_precision_reduction, m.allow_fp16_reduced_precision_reduction)
    yield
    torch.set_float32_matmul_precision(saved[0])  # first: it moves allow_tf32 too
    m.allow_tf32, cudnn.allow_tf32 = saved[1], saved[2]
    m.allow_bf16_reduced_precision_reduction, m.allow_fp16_reduced_precision_reduction = saved[3], saved[4]


@pytest.mark.parametrize("name,tf32", [("float32", False), ("tf32", True), ("bfloat16", False), ("float16", False),
                                       ("float64", False)])
def test_precision_flags_follow_the_name(name, tf32, global_flags):
    for set_flags in (backend.set_precision, gemm._set_flags):
        torch.backends.cuda.matmul.allow_tf32 = not tf32  # the opposite, so the call must set it
        set_flags(name)
        assert torch.backends.cuda.matmul.allow_tf32 is tf32
        assert torch.get_float32_matmul_precision() == ("high" if tf32 else "highest")
    torch.backends.cudnn.allow_tf32 = not tf32
    backend.set_precision(name)
    assert torch.backends.cudnn.allow_tf32 is tf32


def test_calibrate_refuses_float8_by_name():
    with pytest.raises(xt.Unsupported, match="float8_e4m3 has no torch.matmul"):
        calibrate.measure("cpu", ["float8_e4m3"], backend.set_precision)


def _dtypes(caps: xt.Capabilities, workload: str) -> tuple:
    return caps.of(workload).values["dtype"]


def test_capabilities_are_unchanged():
    assert _dtypes(backend.ALL, "ttt") == ("float32", "tf32", "bfloat16", "float16", "float64")
    assert _dtypes(backend.ALL, "gemm") == ("float32", "tf32", "bfloat16", "float16", "float8_e4m3")
    assert _dtypes(backend.ALL, "attention") == ("float32", "bfloat16", "float16")
    assert _dtypes(backend.ALL, "scan") == ("float32", "float64")
    assert _dtypes(backend.ALL, "problem") == ("float32", "float64")
    assert _dtypes(backend.COMPILE.capabilities, "ttt") == ("float32", "tf32", "bfloat16", "float16")
    assert gemm.DTYPES == {"cpu": ("float32", "bfloat16", "float16"),
                           "cuda": ("float32", "tf32", "bfloat16", "float16", "float8_e4m3")}
