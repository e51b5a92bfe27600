"""xbench_py.dtypes, the one dtype table of the Python backends: its
entries, its errors, that it covers every dtype the workloads name, and that
no framework package writes a dtype-name map of its own again (each
framework's resolved dtypes are checked in its own tests:
test_torch_dtypes.py, test_jax_dtypes.py, test_triton_dtypes.py,
test_iree_dtypes.py)."""


import pytest

from xbench_py import dtypes as xd
from xbench_py import facts

# name: (storage element, result element, math), written out.
EXPECTED = {
    "float32": ("float32", "float32", xd.IEEE),
    "tf32": ("float32", "float32", xd.TF32),
    "bfloat16": ("bfloat16", "bfloat16", xd.NARROW),
    "float16": ("float16", "float16", xd.NARROW),
    "float8_e4m3": ("float8_e4m3fn", "bfloat16", xd.NARROW),
    "float64": ("float64", "float64", xd.IEEE),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_entry(name):
    d = xd.of(name)
    assert (d.storage, d.result, d.math) == EXPECTED[name]
    assert (xd.element(name), xd.element(name, result=True)) == EXPECTED[name][:2]
    assert d.tf32 == (name == "tf32")
    assert d.ieee == (name in ("float32", "float64"))


def test_table_is_exactly_the_expected_names():
    assert set(xd.NAMES) == set(EXPECTED)
    assert set(xd.ELEMENTS) == {"float32", "bfloat16", "float16", "float8_e4m3fn", "float64"}


def test_every_workload_dtype_is_in_the_table():
    named = {v for w in facts.NAMES if "dtype" in facts.params(w) for v in facts.allowed(w, "dtype")}
    assert named and named <= set(xd.NAMES)


@pytest.mark.parametrize("bad", ["float8", "fp32", "", None, "Float32"])
def test_unknown_name_raises_naming_it(bad):
    with pytest.raises(ValueError) as e:
        xd.of(bad)
    assert repr(bad) in str(e.value) and "float32" in str(e.value)
    with pytest.raises(ValueError, match="unknown dtype"):
        xd.element(bad)


def test_resolve_refuses_a_name_without_a_form():
    forms = {"float32": "F32", "bfloat16": "BF16"}  # a framework with two elements
    assert xd.resolve("tf32", forms.get, "toy") == "F32"
    assert xd.resolve("float8_e4m3", forms.get, "toy", result=True) == "BF16"
    with pytest.raises(ValueError) as e:
        xd.resolve("float8_e4m3", forms.get, "toy")
    msg = str(e.value)
    assert "'float8_e4m3'" in msg and "float8_e4m3fn" in msg and "toy" in msg
    assert "allowed: float32, tf32, bfloat16" in msg
    with pytest.raises(ValueError, match="unknown dtype 'int8'"):
        xd.resolve("int8", forms.get, "toy")
