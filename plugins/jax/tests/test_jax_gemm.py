"""The JAX GEMM module (xbench_jax/gemm.py) on cpu beyond the conformance suite (plugins/_python/tests/test_conformance.py),
which checks every layout and dtype against a float64 product: its dtypes,
the prepared step, the jaxpr without a transpose, and bad params."""

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from xbench_jax import gemm as g

M, N, K = 17, 33, 40
TOL = {"float32": 1e-5, "bfloat16": 2e-2, "float16": 2e-3}


def _inputs(layout, batch, seed=0):
    rng = np.random.default_rng(seed)
    sa, sb = g.stored_shapes(M, N, K, batch, layout)
    return rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)


def _reference(layout, a, b):
    opa = a if layout[0] == "n" else np.swapaxes(a, 1, 2)
    opb = b if layout[1] == "n" else np.swapaxes(b, 1, 2)
    return np.matmul(opa.astype(np.float64), opb.astype(np.float64))


def _rel(x, ref):
    return float(np.linalg.norm(x.astype(np.float64) - ref) / np.linalg.norm(ref))


def _params(layout, batch, dtype):
    return {"m": str(M), "n": str(N), "k": str(K), "batch": str(batch), "layout": layout, "dtype": dtype}


def test_cpu_dtypes():
    assert set(g.DTYPES["cpu"]) == {"float32", "bfloat16", "float16"}
    assert "tf32" not in g.DTYPES["cpu"] and "float8_e4m3" not in g.DTYPES["cpu"]
    for dtype in ("tf32", "float8_e4m3"):
        with pytest.raises(ValueError):
            g.prepare(_params("nn", 1, dtype), "cpu", 0)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("layout,batch", [("nn", 1), ("tt", 3), ("nt", 3), ("tn", 1)])
def test_prepare_step_shape_dtype_and_seed(layout, batch, dtype):
    p = _params(layout, batch, dtype)
    step = g.prepare(p, "cpu", seed=7)
    c = step()
    assert isinstance(c, jax.Array)
    assert c.shape == (batch, M, N)
    assert c.dtype == {"float32": jnp.float32, "bfloat16": jnp.bfloat16}[dtype]
    c = np.asarray(c.astype(jnp.float32))
    assert np.isfinite(c).all()
    np.testing.assert_array_equal(np.asarray(step().astype(jnp.float32)), c)
    np.testing.assert_array_equal(np.asarray(g.prepare(p, "cpu", seed=7)().astype(jnp.float32)), c)
    assert not np.array_equal(np.asarray(g.prepare(p, "cpu", seed=8)().astype(jnp.float32)), c)


@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_no_transpose_op_in_the_jaxpr(layout):
    # The layout goes into dot_general's dimension numbers, not a transpose.
    sa, sb = g.stored_shapes(M, N, K, 2, layout)
    jaxpr = jax.make_jaxpr(g.gemm_fn(layout, "float32"))(jnp.zeros(sa), jnp.zeros(sb))
    prims = [e.primitive.name for e in jaxpr.eqns]
    assert "dot_general" in prims and "transpose" not in prims
    dot = next(e for e in jaxpr.eqns if e.primitive.name == "dot_general")
    assert str(dot.params["precision"]).upper().count("HIGHEST") >= 1


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_narrow_gemm_on_a_gpu_is_one_dot_with_a_narrow_result(dtype):
    # On a GPU the product is the dot alone with a 16-bit result, which XLA
    # makes the cuBLASLt call torch makes (float32 compute type); on the CPU
    # the float32 accumulation is stated: a float32 dot, then a cast.
    store = {"bfloat16": jnp.bfloat16, "float16": jnp.float16}[dtype]
    sa, sb = g.stored_shapes(M, N, K, 1, "nt")
    args = (jnp.zeros(sa, store), jnp.zeros(sb, store))
    gpu = jax.make_jaxpr(g.gemm_fn("nt", dtype, gpu=True))(*args)
    assert [e.primitive.name for e in gpu.eqns] == ["dot_general"]
    assert gpu.eqns[0].outvars[0].aval.dtype == store
    cpu = jax.make_jaxpr(g.gemm_fn("nt", dtype))(*args)
    assert [e.primitive.name for e in cpu.eqns] == ["dot_general", "convert_element_type"]
    assert cpu.eqns[0].outvars[0].aval.dtype == jnp.float32


def test_bad_params_rejected():
    with pytest.raises(ValueError):
        g.prepare(_params("nx", 1, "float32"), "cpu", 0)
    a, b = _inputs("nn", 1)
    with pytest.raises(ValueError):
        g.export(_params("tn", 1, "float32"), "cpu", a, b)


@pytest.mark.parametrize("hlo,want", [
    # XLA:GPU's forms (optimized HLO text): a cuBLASLt custom call with the
    # algorithm the autotuner selected, a Triton GEMM fusion with its tiles.
    ('%cublas-gemm.1 = (bf16[1,64,64]{2,1,0}, s8[0]{0}) custom-call(%p0, %p1), custom_call_target="__cublas$lt$matmul", '
     'backend_config={"gemm_backend_config":{"alpha_real":1,"selected_algorithm":"7"}}', "cublas$lt$matmul (algorithm 7)"),
    ('%gemm_fusion_dot.0 = bf16[64,64]{1,0} fusion(%p0, %p1), kind=kCustom, calls=%gemm_fusion_dot.0_computation, '
     'backend_config={"fusion_backend_config":{"kind":"__triton_gemm","triton_gemm_config":{"block_m":"64",'
     '"block_n":"128","block_k":"32","split_k":"1","num_stages":"4","num_warps":"4","num_ctas":"1"}}}',
     "triton_gemm block_m=64,block_n=128,block_k=32,split_k=1,num_stages=4,num_warps=4,num_ctas=1"),
    ("ROOT %dot.1 = f32[8,8]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}", "dot"),
    ("ROOT %add = f32[8]{0} add(%a, %b)", ""),
])
def test_describe_hlo(hlo, want):
    assert g.describe_hlo(hlo) == want


def test_the_kernel_xla_chose_is_recorded():
    """A result names what XLA compiled the product to (env.settings.xla_kernel);
    on the CPU, a dot."""
    from xbench_jax.backend import Backend
    from xbench_py import runner as xr
    from xbench_py import workloads as xw

    rec = xr.run(Backend(), xw.Gemm(m=32, n=16, k=8, layout="nt", warmup=0, repeats=1), "", "cpu")
    assert rec["status"] == "ok" and rec["env"]["settings"]["xla_kernel"] == "dot", rec
