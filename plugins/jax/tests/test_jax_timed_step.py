"""The timed call of every JAX workload is the operation alone (issue 31):
its jaxpr holds the spec's work and nothing else, no layout transpose, no
dtype cast, no copy of the inputs. Counted in the jaxpr of the jitted
function each step calls, with the arguments it calls it with."""

import collections
import contextlib
import dataclasses

import jax
import jax.numpy as jnp
import pytest

from xbench_jax import attention
from xbench_jax import gemm
from xbench_jax import scan
from xbench_py import workloads as xw

CPU = jax.devices("cpu")[0]


def _subjaxprs(params):
    for v in params.values():
        for x in v if isinstance(v, (tuple, list)) else (v,):
            if hasattr(x, "jaxpr") and hasattr(x.jaxpr, "eqns"):
                yield x.jaxpr
            elif hasattr(x, "eqns"):
                yield x


def eqns(jaxpr):
    """Every equation of jaxpr and of the jaxprs nested in it (jit, scan, ...)."""
    for e in jaxpr.eqns:
        yield e
        for sub in _subjaxprs(e.params):
            yield from eqns(sub)


def ops(fn, args) -> collections.Counter:
    """Primitive counts of fn(*args), the outer jit wrappers left out."""
    return collections.Counter(e.primitive.name for e in eqns(jax.make_jaxpr(fn)(*args).jaxpr)
                               if e.primitive.name not in ("jit", "pjit"))


@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_gemm_step_is_one_dot(layout, dtype):
    step = gemm.prepare({"m": "8", "n": "16", "k": "32", "batch": "2", "layout": layout, "dtype": dtype}, "cpu", 0)
    want = collections.Counter({"dot_general": 1})
    if dtype != "float32":
        # The spec's own cast: float32 accumulation, C in the dtype.
        want["convert_element_type"] = 1
    assert ops(step.fn, step.args) == want
    assert all(a.dtype == jnp.dtype(dtype) for a in step.args)  # operands stored in the dtype already


ATT = xw.Attention(batch=1, heads=4, kv_heads=2, seq_len=16, head_dim=8, causal=True, dtype="float32")


def bare(cfg, impl):
    """jax.nn.dot_product_attention itself in its own layout: the reference
    of what a timed call may contain."""
    prec = attention.precision(cfg.dtype)

    def f(q, k, v):
        with jax.default_matmul_precision(prec) if prec else contextlib.nullcontext():
            return jax.nn.dot_product_attention(q, k, v, scale=cfg.scale, is_causal=cfg.causal, implementation=impl)
    return f


@pytest.mark.parametrize("variant", ["", "xla"])
@pytest.mark.parametrize("phase", ["forward", "backward", "both"])
def test_attention_step_is_the_attention_alone(variant, phase):
    cfg = dataclasses.replace(ATT, phase=phase)
    step = attention.prepare(cfg, variant, CPU, 0)
    B, H, KH, S, D = cfg.batch, cfg.heads, cfg.kvh, cfg.seq_len, cfg.head_dim
    f = bare(cfg, attention.IMPLEMENTATIONS[variant])
    q = jnp.zeros((B, S, H, D))
    k = jnp.zeros((B, S, KH, D))
    if phase == "forward":
        assert [a.shape for a in step.args] == [q.shape, k.shape, k.shape]  # JAX's BTNH, made in prepare
        ref = ops(f, (q, k, k))
    elif phase == "backward":
        _, pb = jax.vjp(f, q, k, k)
        ref = ops(lambda p, do: p(do), (pb, q))
    else:
        ref = ops(lambda q, k, v, do: (lambda o, p: (o, *p(do)))(*jax.vjp(f, q, k, v)), (q, k, k, q))
    assert ops(step.fn, step.args) == ref


def test_the_attention_check_sees_a_layout_conversion():
    """The counter the test above relies on does see the four transposes the
    step used to carry (BHSD in, BTNH to dot_product_attention, and back)."""
    f = bare(ATT, "xla")
    sw = lambda x: jnp.swapaxes(x, 1, 2)  # noqa: E731
    q, k = jnp.zeros((1, 16, 4, 8)), jnp.zeros((1, 16, 2, 8))
    old = ops(lambda q, k, v: sw(f(sw(q), sw(k), sw(v))), (sw(q), sw(k), sw(k)))
    assert old - ops(f, (q, k, k)) == collections.Counter({"transpose": 4})


@pytest.mark.parametrize("phase", ["forward", "backward", "both"])
def test_scan_step_has_no_transpose_or_cast(phase):
    cfg = xw.Scan(T=16, K=4, C=4, batch=2, phase=phase)
    step = scan.prepare(cfg, CPU, 0).step
    jaxpr = jax.make_jaxpr(step.fn)(*step.args).jaxpr
    names = collections.Counter(e.primitive.name for e in eqns(jaxpr))
    assert names["transpose"] == 0 and names["copy"] == 0 and names["copy_p"] == 0
    # No float is cast to another float dtype: the arithmetic is the spec's
    # float32 throughout (converts that remain drop JAX's weak type, or turn
    # the max gradient's bool masks into numbers).
    for e in eqns(jaxpr):
        if e.primitive.name == "convert_element_type" and jnp.issubdtype(e.invars[0].aval.dtype, jnp.floating):
            assert e.invars[0].aval.dtype == e.params["new_dtype"], e
    assert names["scan"] >= 1  # the loop itself is the work
