"""The iree backend's dtypes through xbench_py.dtypes: the MLIR element
types and the host arrays' NumPy types are what its maps held before the
table (mlir.ELT, backend.np_dtype; written out here), tf32 and float8 stay
refused with the same answer, and the capabilities are the ones declared
before."""

import ml_dtypes
import numpy as np
import pytest

from xbench_iree import backend as iree_backend
from xbench_iree import mlir as iree_mlir

# name: (MLIR element type, NumPy type of the host arrays)
EXPECTED = {
    "float32": ("f32", np.float32),
    "bfloat16": ("bf16", ml_dtypes.bfloat16),
    "float16": ("f16", np.float16),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_resolved_forms_are_the_old_maps(name):
    assert iree_mlir.element_type(name, "gemm") == EXPECTED[name][0]
    assert iree_backend.np_dtype(name) is EXPECTED[name][1]


@pytest.mark.parametrize("name", ["tf32", "float8_e4m3", "float64", "fp32"])
@pytest.mark.parametrize("what,build", [
    ("gemm", lambda d: iree_mlir.gemm(8, 8, 8, 1, "nn", d)),
    ("attention", lambda d: iree_mlir.attention(1, 2, 1, 8, 8, 16, False, d)),
])
def test_refused_names_keep_their_answer(name, what, build):
    with pytest.raises(ValueError) as e:
        build(name)
    assert str(e.value) == f"{what} dtype {name!r} has no IREE form here (allowed: float32, bfloat16, float16)"


def test_mlir_text_carries_the_element_type():
    assert "xbf16>" in iree_mlir.gemm(8, 8, 8, 1, "nt", "bfloat16")
    assert "xf16>" in iree_mlir.attention(1, 2, 1, 8, 8, 16, True, "float16")


def test_capabilities_are_unchanged():
    caps = iree_backend.CAPS
    assert caps.of("gemm").values["dtype"] == ("float32", "bfloat16", "float16")
    assert caps.of("attention").values["dtype"] == ("float32", "bfloat16", "float16")
