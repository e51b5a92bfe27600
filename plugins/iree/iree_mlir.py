"""The MLIR text of each xbench configuration IREE runs: plain strings, no
IREE import, so the compile-cache key (iree_cache.py) and the precompile
script see exactly the text that is compiled.

Why linalg on tensors (not StableHLO): it is IREE's own input level, so what
is timed is IREE's codegen of one named contraction, with nothing between
(no StableHLO legalisation choosing a dot_general lowering). Each GEMM is ONE
linalg.generic whose indexing maps name the stored layout of A and B, so a
't' operand is read in place, never copied (docs/workloads/gemm.md); the body
extends the narrow operands to f32 and accumulates in f32, then one
elementwise generic truncates C to the dtype (IREE fuses it into the
matmul's dispatch). Attention is IREE's fused iree_linalg_ext.attention op,
the form its torch importer gives scaled_dot_product_attention; its scores,
max and sums are f32 by construction of the op.

Function names: @gemm(a, b) -> c, @attention(q, k, v) -> out.
"""

from __future__ import annotations

ELT = {"float32": "f32", "bfloat16": "bf16", "float16": "f16"}


def _t(shape, elt: str) -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + elt + ">"


def gemm_shapes(m: int, n: int, k: int, batch: int, layout: str) -> tuple[tuple, tuple, tuple]:
    """The stored shapes of A, B and C (docs/workloads/gemm.md)."""
    a = (batch, m, k) if layout[0] == "n" else (batch, k, m)
    b = (batch, k, n) if layout[1] == "n" else (batch, n, k)
    return a, b, (batch, m, n)


def gemm(m: int, n: int, k: int, batch: int, layout: str, dtype: str) -> str:
    """C[b,i,j] = sum_p op(A)[b,i,p] op(B)[b,p,j], f32 accumulation, C in dtype."""
    if layout not in ("nn", "nt", "tn", "tt"):
        raise ValueError(f"gemm layout {layout!r} (allowed: nn, nt, tn, tt)")
    if dtype not in ELT:
        raise ValueError(f"gemm dtype {dtype!r} has no IREE form here (allowed: {', '.join(ELT)})")
    e = ELT[dtype]
    sa, sb, sc = gemm_shapes(m, n, k, batch, layout)
    ta, tb, tacc, tc = _t(sa, e), _t(sb, e), _t(sc, "f32"), _t(sc, e)
    amap = "(b, i, p)" if layout[0] == "n" else "(b, p, i)"
    bmap = "(b, p, j)" if layout[1] == "n" else "(b, j, p)"
    if e == "f32":
        body = ("      %p = arith.mulf %x, %y : f32\n")
    else:
        body = (f"      %xf = arith.extf %x : {e} to f32\n"
                f"      %yf = arith.extf %y : {e} to f32\n"
                "      %p = arith.mulf %xf, %yf : f32\n")
    out = "%acc"
    trunc = ""
    if e != "f32":
        out = "%c"
        trunc = f"""  %ec = tensor.empty() : {tc}
  %c = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%acc : {tacc}) outs(%ec : {tc}) {{
    ^bb0(%x: f32, %y: {e}):
      %t = arith.truncf %x : f32 to {e}
      linalg.yield %t : {e}
  }} -> {tc}
"""
    return f"""#amap = affine_map<(b, i, j, p) -> {amap}>
#bmap = affine_map<(b, i, j, p) -> {bmap}>
#cmap = affine_map<(b, i, j, p) -> (b, i, j)>
#id = affine_map<(b, i, j) -> (b, i, j)>
func.func @gemm(%a: {ta}, %b: {tb}) -> {tc} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {tacc}
  %init = linalg.fill ins(%zero : f32) outs(%e : {tacc}) -> {tacc}
  %acc = linalg.generic {{indexing_maps = [#amap, #bmap, #cmap], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
      ins(%a, %b : {ta}, {tb}) outs(%init : {tacc}) {{
    ^bb0(%x: {e}, %y: {e}, %s: f32):
{body}      %q = arith.addf %s, %p : f32
      linalg.yield %q : f32
  }} -> {tacc}
{trunc}  return {out} : {tc}
}}
"""
