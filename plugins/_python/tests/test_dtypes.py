"""xbench_py.dtypes, the one dtype table of the Python backends: its
entries, its errors, that it covers every dtype the workloads name, and that
no framework package writes a dtype-name map of its own again (each
framework's resolved dtypes are checked in its own tests:
test_torch_dtypes.py, test_jax_dtypes.py, test_triton_dtypes.py,
test_iree_dtypes.py)."""


import ast
import os

import pytest

from xbench_py import dtypes as xd
from xbench_py import facts

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

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
# ------------------------------------------------ no second table in a backend

FRAMEWORKS = sorted(d for d in os.listdir(PYDIR) if d.startswith("xbench_") and d != "xbench_py"
                    and os.path.isfile(os.path.join(PYDIR, d, "__init__.py")))
KEYS = set(xd.NAMES) | set(xd.ELEMENTS)


def dtype_maps(source: str) -> list:
    """The lines of dict literals (or dict(...) calls) keyed by a dtype name
    or element ("bfloat16"), or translating one framework's dtypes into
    another's ({torch.bfloat16: tl.bfloat16}). A table of settings per
    framework dtype ({torch.bfloat16: (4, 32, 2)}, launch tuning) is not a
    dtype map."""
    def attr(n) -> str:
        return n.attr if isinstance(n, ast.Attribute) else ""

    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            keys = node.keys
            names = [k.value for k in keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            names += [attr(k) for k, v in zip(keys, node.values) if attr(k) in KEYS and attr(v) in KEYS]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            names = [k.arg for k in node.keywords]
        else:
            continue
        if KEYS & set(names):
            out.append(node.lineno)
    return out


@pytest.mark.parametrize("source,found", [
    ('DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}', [1]),
    ("DOT = {torch.float32: tl.float32}", [1]),
    ("LAUNCH = {torch.float32: (4, 32, 2)}", []),
    ("x = 1\nE = dict(float16='f16')", [2]),
    ('OK = {"kernelbench": (True, False)}', []),
    ("D = {n: f(n) for n in NAMES}", []),
])
def test_dtype_maps_finds_literal_maps(source, found):
    assert dtype_maps(source) == found


@pytest.mark.parametrize("package", FRAMEWORKS)
def test_no_framework_defines_its_own_dtype_map(package):
    found = []
    folder = os.path.join(PYDIR, package)
    for f in sorted(os.listdir(folder)):
        if f.endswith(".py"):
            with open(os.path.join(folder, f), encoding="utf-8") as src:
                found += [f"{package}/{f}:{line}" for line in dtype_maps(src.read())]
    assert not found, "dtype-name maps outside xbench_py.dtypes (resolve through it): " + ", ".join(found)


def test_capabilities_take_only_table_names():
    from xbench_py import types as xt

    assert xt.WorkloadCaps("gemm", values={"dtype": ("float32", "tf32")}).values["dtype"] == ("float32", "tf32")
    with pytest.raises(ValueError, match="unknown dtype 'fp32'"):
        xt.WorkloadCaps("gemm", values={"dtype": ("float32", "fp32")})
