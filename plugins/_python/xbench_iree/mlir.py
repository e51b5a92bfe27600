"""The MLIR text of each xbench configuration IREE runs: plain strings, no
IREE import, so the compile-cache key (cache.py) and the precompile
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

from xbench_py import dtypes as xd

# The dtypes written here (the backend's capabilities): tf32 and float8 have
# no IREE form here (tf32's float32 storage would run as IEEE f32).
DTYPES = ("float32", "bfloat16", "float16")
NEG_INF = {"f32": "0xFF800000", "bf16": "0xFF80", "f16": "0xFC00"}  # -inf bit patterns


def element_type(dtype: str, what: str) -> str:
    """The MLIR element type (f32, bf16, f16) of dtype's storage element in
    xbench_py.dtypes; ValueError naming the dtype for one not in DTYPES."""
    if dtype not in DTYPES:
        raise ValueError(f"{what} dtype {dtype!r} has no IREE form here (allowed: {', '.join(DTYPES)})")

    def form(element: str):
        bits = element.removeprefix("b").removeprefix("float")  # float32 -> f32, bfloat16 -> bf16
        return ("bf" if element.startswith("b") else "f") + bits if bits.isdigit() else None
    return xd.resolve(dtype, form, "MLIR")


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
    e = element_type(dtype, "gemm")
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


def attention_shapes(batch: int, heads: int, kv_heads: int, seq: int, kv: int, d: int) -> tuple[tuple, tuple]:
    """q/out and k/v shapes, BHSD (docs/workloads/attention.md)."""
    return (batch, heads, seq, d), (batch, kv_heads, kv, d)


def attention(batch: int, heads: int, kv_heads: int, seq: int, kv: int, d: int, causal: bool, dtype: str) -> str:
    """out = softmax(scale q k^T [causal mask]) v with query head h reading kv
    head h div g. q is viewed as [b, kv_heads, g, s, d] (an expand_shape,
    free), so the grouping is an indexing map that broadcasts k and v over
    the g dimension: no copy of k or v is made. The causal mask is an additive
    [seq, kv] mask of 0 / -inf built inside the call and broadcast over
    batch and heads (IREE 3.13's attention does not lower
    iree_linalg_ext.index in its score region, so the mask is a tensor). Scores and softmax are f32 inside the op."""
    e = element_type(dtype, "attention")
    if heads % kv_heads:
        raise ValueError(f"attention heads {heads} is not a multiple of kv_heads {kv_heads}")
    g = heads // kv_heads
    tq, tk = _t((batch, heads, seq, d), e), _t((batch, kv_heads, kv, d), e)
    tq5 = _t((batch, kv_heads, g, seq, d), e)
    scale = 1.0 / d ** 0.5
    region = "    ^bb0(%s: f32):\n      iree_linalg_ext.yield %s : f32\n"
    mask_def, mask_in, mask_map, mask_t = "", "", "", ""
    if causal:
        # key j visible to query i when j <= i + (kv - seq) (bottom-right
        # aligned): an additive [seq, kv] mask of 0 / -inf, built inside the
        # call from the indices and broadcast over batch and heads.
        tm = _t((seq, kv), e)
        mask_def = f"""  %em = tensor.empty() : {tm}
  %mask = linalg.generic {{indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}} outs(%em : {tm}) {{
    ^bb0(%o: {e}):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %off = arith.constant {kv - seq} : index
      %lim = arith.addi %i, %off : index
      %vis = arith.cmpi ule, %j, %lim : index
      %zero = arith.constant 0.0 : {e}
      %ninf = arith.constant {NEG_INF[e]} : {e}
      %m = arith.select %vis, %zero, %ninf : {e}
      linalg.yield %m : {e}
  }} -> {tm}
"""
        mask_in, mask_map, mask_t = ", %mask", ", #mm", f", {tm}"
    dims = "(b, h, g, i, j, p, e)"
    return f"""#mq = affine_map<{dims} -> (b, h, g, i, p)>
#mk = affine_map<{dims} -> (b, h, j, p)>
#mv = affine_map<{dims} -> (b, h, j, e)>
#ms = affine_map<{dims} -> ()>
#mo = affine_map<{dims} -> (b, h, g, i, e)>
#mm = affine_map<{dims} -> (i, j)>
#id2 = affine_map<(i, j) -> (i, j)>
func.func @attention(%q: {tq}, %k: {tk}, %v: {tk}) -> {tq} {{
  %scale = arith.constant {scale!r} : {e}
  %q5 = tensor.expand_shape %q [[0], [1, 2], [3], [4]] output_shape [{batch}, {kv_heads}, {g}, {seq}, {d}] : {tq} into {tq5}
{mask_def}  %init = tensor.empty() : {tq5}
  %o5 = iree_linalg_ext.attention <indexing_maps = [#mq, #mk, #mv, #ms{mask_map}, #mo]>
      ins(%q5, %k, %v, %scale{mask_in} : {tq5}, {tk}, {tk}, {e}{mask_t}) outs(%init : {tq5}) {{
{region}  }} -> {tq5}
  %o = tensor.collapse_shape %o5 [[0], [1, 2], [3], [4]] : {tq5} into {tq}
  return %o : {tq}
}}
"""


def for_params(workload: str, p: dict) -> tuple[str, str]:
    """(label, MLIR) of a configuration given as the harness's string params:
    the one mapping the backend and the precompile script share, so both
    compute the same cache key."""
    if workload == "gemm":
        m, n, k, batch = (int(p[x]) for x in ("m", "n", "k", "batch"))
        layout, dtype = p.get("layout", "nn"), p.get("dtype", "float32")
        return f"gemm {m}x{n}x{k} b{batch} {layout} {dtype}", gemm(m, n, k, batch, layout, dtype)
    if workload == "attention":
        b, h, s, d = (int(p[x]) for x in ("batch", "heads", "seq_len", "head_dim"))
        kh, kv = int(p.get("kv_heads", "0")) or h, int(p.get("kv_len", "0")) or s
        causal, dtype = p.get("causal", "false") == "true", p.get("dtype", "bfloat16")
        label = f"attention b{b} h{h}/{kh} s{s} kv{kv} d{d}{' causal' if causal else ''} {dtype}"
        return label, attention(b, h, kh, s, kv, d, causal, dtype)
    raise ValueError(f"iree: workload {workload!r} has no MLIR here (allowed: gemm, attention)")
