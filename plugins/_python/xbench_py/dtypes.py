"""The one table of xbench's dtype names for the Python backends (issue 44:
one dtype table per language; the Go side's are burnstyle-hip's
cpu.Rounding and gpu.DtypeOf). Standard library only and no framework
import: each framework resolves an element name to its own dtype in one
function of its own, through resolve() (xbench_pytorch.model.torch_dtype,
xbench_jax.model.jax_dtype, xbench_triton.dot.tl_dtype,
xbench_iree.mlir.element_type and xbench_iree.backend.np_dtype).

Each entry says, for one name the workloads use (facts.json's dtype enums):
  storage  the element operands and activations are stored in, named as
           torch, JAX and NumPy name it (float8_e4m3 is stored as
           float8_e4m3fn: finite, no infinities)
  result   the element a result is handed back in: the storage element,
           except float8_e4m3, whose products come back in bfloat16
           (a float8 C would round away most of the product)
  math     what the products may do to the operands:
             IEEE    nothing: products in the storage element's own
                     precision (float32, float64), never TF32
             TF32    float32 storage whose products may round the operands
                     to TF32 (tensor cores; IEEE where a device has none)
             NARROW  operands narrower than float32, products accumulated
                     in float32
Which names a backend accepts is its capabilities' business, not this
table's: a name here may have no form in a framework (resolve() says so).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

IEEE, TF32, NARROW = "ieee", "tf32", "narrow"


@dataclass(frozen=True)
class Dtype:
    name: str
    storage: str
    result: str
    math: str

    @property
    def tf32(self) -> bool:
        return self.math == TF32

    @property
    def ieee(self) -> bool:
        return self.math == IEEE


_ENTRIES = (
    Dtype("float32", storage="float32", result="float32", math=IEEE),
    Dtype("tf32", storage="float32", result="float32", math=TF32),
    Dtype("bfloat16", storage="bfloat16", result="bfloat16", math=NARROW),
    Dtype("float16", storage="float16", result="float16", math=NARROW),
    Dtype("float8_e4m3", storage="float8_e4m3fn", result="bfloat16", math=NARROW),
    Dtype("float64", storage="float64", result="float64", math=IEEE),
)
TABLE = {d.name: d for d in _ENTRIES}
NAMES = tuple(TABLE)
# Every element name an entry stores or hands back in.
ELEMENTS = tuple(dict.fromkeys(e for d in _ENTRIES for e in (d.storage, d.result)))


def of(name: str) -> Dtype:
    """name's entry; ValueError naming it and the known names otherwise."""
    try:
        return TABLE[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown dtype {name!r} (known: {', '.join(NAMES)})") from None


def element(name: str, result: bool = False) -> str:
    """The storage element of name, or with result its result element."""
    d = of(name)
    return d.result if result else d.storage


def resolve(name: str, form: Callable[[str], Optional[object]], framework: str, result: bool = False):
    """name's storage (or result) element in a framework: form maps an
    element name to the framework's dtype, None where it has none; a name
    without a form is a ValueError naming the dtype, the element and the
    names that have one there."""
    elt = element(name, result)
    got = form(elt)
    if got is None:
        have = [n for n in NAMES if form(element(n, result)) is not None]
        raise ValueError(f"dtype {name!r} (element {elt}) has no {framework} form (allowed: {', '.join(have)})")
    return got
