"""The triton backend's dtypes through xbench_py.dtypes (conftest sets
TRITON_INTERPRET=1): the kernels' operand dtypes, the gemm's storage, C and
dot precision are what its maps held before the table (written out here),
the capabilities are the ones declared before, and a name without a triton
form is refused by name."""

import pytest
import torch
import triton.language as tl

from xbench_py import types as xt
from xbench_triton import attention as ta
from xbench_triton import backend
from xbench_triton import dot
from xbench_triton import gemm as g
from xbench_triton import model

# name: (tl dtype of the storage element), for the names triton has a form of.
TL = {"float32": tl.float32, "tf32": tl.float32, "bfloat16": tl.bfloat16, "float16": tl.float16,
      "float64": tl.float64}
# name: (storage, C, PREC): torch_gemm.STORE/OUT and gemm._PREC as they were.
GEMM = {
    "float32": (torch.float32, torch.float32, 0),
    "tf32": (torch.float32, torch.float32, 1),
    "bfloat16": (torch.bfloat16, torch.bfloat16, 2),
    "float16": (torch.float16, torch.float16, 2),
    "float8_e4m3": (torch.float8_e4m3fn, torch.bfloat16, 2),
}


@pytest.mark.parametrize("name", sorted(TL))
def test_tl_dtype(name):
    assert dot.tl_dtype(name) == TL[name]


def test_float8_has_no_triton_form_by_that_name():
    with pytest.raises(ValueError) as e:
        dot.tl_dtype("float8_e4m3")
    msg = str(e.value)
    assert "'float8_e4m3'" in msg and "float8_e4m3fn" in msg and "triton" in msg
    assert "allowed: float32, tf32, bfloat16, float16, float64" in msg


@pytest.mark.parametrize("bad", ["fp32", "float8", ""])
def test_unknown_name_raises_naming_it(bad):
    with pytest.raises(ValueError, match=f"unknown dtype {bad!r}"):
        dot.tl_dtype(bad)


def test_dot_dtypes_are_the_old_maps():
    old = {torch.float32: tl.float32, torch.bfloat16: tl.bfloat16, torch.float16: tl.float16}
    assert dot.DOT_DTYPES == old
    assert model.DOT_DTYPES is dot.DOT_DTYPES and ta.DOT_DTYPES is dot.DOT_DTYPES


@pytest.mark.parametrize("name", xt.GEMM_DTYPES)
def test_gemm_store_out_and_precision(name):
    from xbench_pytorch import gemm as torch_gemm

    assert (torch_gemm.store_dtype(name), torch_gemm.out_dtype(name), g.dot_precision(name)) == GEMM[name]


@pytest.mark.parametrize("dtype,ok", [("float32", True), ("bfloat16", True), ("float16", True),
                                      (torch.float16, True), ("tf32", False), ("float8_e4m3", False),
                                      ("float64", False), (torch.float64, False), ("bogus", False)])
def test_attention_dtype_check_by_name_or_torch_dtype(dtype, ok):
    why = ta.check_shapes(2, 8, 2, 100, 100, 64, dtype, "cpu")
    assert why == "" if ok else why == f"triton attention: dtype {dtype} is not one of float32, bfloat16, float16"


def test_capabilities_are_unchanged():
    caps = backend.CAPS
    assert caps.of("ttt").values["dtype"] == ("float32", "bfloat16", "float16")
    assert caps.of("gemm").values["dtype"] == ("float32", "tf32", "bfloat16", "float16", "float8_e4m3")
    assert caps.of("attention").values["dtype"] == ("float32", "bfloat16", "float16")
    assert caps.of("scan").values["dtype"] == ("float32", "float64")
    assert g.DTYPES == {"cpu": ("float32", "bfloat16", "float16"),
                        "cuda": ("float32", "tf32", "bfloat16", "float16", "float8_e4m3")}
