"""The jax backend's dtypes through xbench_py.dtypes: every name resolves
to the jax.numpy dtypes its maps held before the table (written out here),
the matmul precisions are the old ones, the gemm's C comes back in the
result dtype, the capabilities are the ones declared before, and a name
without a form is refused by name."""

import jax
import jax.numpy as jnp
import pytest

from xbench_jax import attention, backend, gemm
from xbench_jax.model import jax_dtype, matmul_precision
from xbench_py import types as xt

# name: (storage, result): model.DTYPES, gemm._STORE (C: bfloat16 for
# float8_e4m3) and attention.DTYPES as they were. float64 had no entry (the
# capabilities refuse it before any resolution); jnp names it all the same.
EXPECTED = {
    "float32": (jnp.float32, jnp.float32),
    "tf32": (jnp.float32, jnp.float32),
    "bfloat16": (jnp.bfloat16, jnp.bfloat16),
    "float16": (jnp.float16, jnp.float16),
    "float8_e4m3": (jnp.float8_e4m3fn, jnp.bfloat16),
    "float64": (jnp.float64, jnp.float64),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_resolved_dtypes_are_the_old_maps(name):
    store, out = jax_dtype(name), jax_dtype(name, result=True)
    assert (store, out) == EXPECTED[name]
    assert store is EXPECTED[name][0]  # the same jnp scalar types, not merely equal numpy dtypes


@pytest.mark.parametrize("bad", ["fp32", "float8", ""])
def test_unknown_name_raises_naming_it(bad):
    with pytest.raises(ValueError, match=f"unknown dtype {bad!r}"):
        jax_dtype(bad)


def test_a_jax_without_the_element_refuses_by_name(monkeypatch):
    monkeypatch.delattr(jnp, "float8_e4m3fn")
    with pytest.raises(ValueError) as e:
        jax_dtype("float8_e4m3")
    assert "'float8_e4m3'" in str(e.value) and "float8_e4m3fn" in str(e.value) and "jax" in str(e.value)


@pytest.mark.parametrize("name,ttt,attn", [("float32", "highest", "highest"), ("tf32", "default", None),
                                           ("bfloat16", "default", None), ("float16", "default", None)])
def test_precisions_are_the_old_maps(name, ttt, attn):
    assert matmul_precision(name) == ttt  # model.PRECISION
    if name in xt.ATTENTION_DTYPES:
        assert attention.precision(name) == attn  # attention.PRECISION.get


@pytest.mark.parametrize("name", xt.GEMM_DTYPES)
def test_gemm_c_is_the_result_dtype(name):
    # The traced product only (no compile, no device): C's dtype on cpu and
    # on the GPU form, for every gemm dtype, float8_e4m3's bfloat16 included.
    a = jax.ShapeDtypeStruct((1, 8, 16), EXPECTED[name][0])
    b = jax.ShapeDtypeStruct((1, 16, 8), EXPECTED[name][0])
    for gpu in (False, True):
        assert jax.eval_shape(gemm.gemm_fn("nn", name, gpu=gpu), a, b).dtype == EXPECTED[name][1]


def test_capabilities_are_unchanged():
    caps = backend.CAPS
    assert caps.of("ttt").values["dtype"] == ("float32", "tf32", "bfloat16", "float16")
    assert caps.of("gemm").values["dtype"] == ("float32", "tf32", "bfloat16", "float16", "float8_e4m3")
    assert caps.of("attention").values["dtype"] == ("float32", "bfloat16", "float16")
    assert caps.of("scan").values["dtype"] == ("float32",)
    cudnn = next(v for v in backend.VARIANTS if v.name == "cudnn")
    assert cudnn.capabilities.of("attention").values["dtype"] == ("bfloat16", "float16")
    assert gemm.DTYPES == {"cpu": ("float32", "bfloat16", "float16"),
                           "cuda": ("float32", "tf32", "bfloat16", "float16", "float8_e4m3")}
