"""The mlp inner model's loop (spec step 4, `--ttt-type mlp`) as two Triton
kernels: the serial chain through the state, one program per (sequence,
head), and the output rows, one program per (sequence, head, mini-batch).

Why two kernels and this layout (the linear kernel's lesson, applied): the
first mlp kernel held W1 [f, 4f] and W2 [4f, f] in registers and took
whole-matrix float32 tl.dots (FMA: each thread loads its rows of the first
operand and its columns of the second over the whole reduction into
registers), which spilled 18 KB a thread at f=64 (16 warps; ptxas of Triton
3.9): 531 ms for the 125m forward on an H100 against jax's 74.
Here the state lives in this program's slice of a scratch (W1S [FP, HP], B1S
[HP], W2S [HP, FP]: 129 KiB at f=64, L1/L2-resident) and every product with
it takes one tile: HB hidden units (columns of W1, rows of W2) at a time,
and of W1 BF rows at a time, so no tl.dot operand is larger than [BF, HB],
[HB, FP] or [K, FP] and registers stay bounded whatever f is
(scripts/dev/triton/ttt_compile_check.py reports registers and spills for sm_90).

One mini-batch step, K=16 rows, f=64, H=4f=256 (MAC = multiply-adds):
  pass 1, per hidden tile (the W1 tile feeds two products):
    Z1 = Kx W1 + b1, ZQ = Q W1 + b1     2 x K f H = 524,288
    X2 = gelu(Z1); Z2 += X2 W2          K H f     = 262,144
  G2 = LN-L2 gradient at Z2 + b2 (K f), m1 = tril(eta (Q Kx^T + 1)) (K K f)
  pass 2, per hidden tile (the W2 tile feeds two products and its update):
    G1 = (G2 W2^T) * gelu'(Z1)          K f H     = 262,144
    X2bar = gelu(ZQ - m1 G1)            K K H     =  65,536
    ZW += X2bar W2                      K H f     = 262,144
    W2 -= X2^T (eta_last G2)            H K f     = 262,144
    W1 -= Kx^T (eta_last G1), b1        f K H     = 262,144
  about 1.9 M MAC a step. State traffic: W1 and W2 read twice each (float32
  reads W2's tiles once more, for G1) and written once, 6-7 x 64 KiB from
  L1/L2, some 7k cycles at 64 B/cycle, under the ~15k cycles the MACs take at
  an SM's full FMA rate (128 a cycle): the products bound the step. The
  linear chain ran at ~16% of that rate (0.71 ms a layer at 4 warps); at the
  same rate this is ~50 us a step, 6.8 ms a layer at 125m (128 steps),
  against ~330 us a step before. It has twice the warps and ~10x the work
  between barriers, so it should do better; unmeasured. G2's row statistics
  and the in-batch masks are the only cross-thread reductions; each pass
  ends at a barrier, and each W2 tile is overwritten only after a barrier
  that follows every read of it.
The output kernel then forms, for every mini-batch at once, the part that
needs no state: m2 = tril(eta (X2bar X2^T + 1)) (K K H), Z2bar = ZW - m2 G2
(K K f) and out = Q + LN(Z2bar). Everything the output needs from the state
(Q W1 + b1, and X2bar W2 with that mini-batch's W2) is taken in the chain,
where the tiles are loaded anyway: saving W2 per mini-batch instead would be
64 KiB a step to store (96 MiB a layer at 125m) for one product fewer.

Not done: splitting the hidden units across programs. Pass 2 is independent
per hidden tile once G2 is known, but Z2 sums over all of them, so every step
would need a grid-wide exchange of Z2 [K, f], and Triton has no grid barrier
(spinning on a flag deadlocks the interpreter, which runs programs one after
another, and co-residency is not guaranteed on a GPU). Within a program the
tiles are spread over num_warps warps by Triton's layouts.

f is padded to FP and H to HP (triton_ttt_math's contract): the scratch is
zero-filled, so padded hidden units have Z1 = 0, X2 = gelu(0) = 0 and no
gradient (their W2 rows are zero), and stay zero.
"""

from __future__ import annotations

import os

import torch
import triton
import triton.language as tl

from xbench_triton.ttt_math import GELU_C, _gelu, _gelu_and_prime, _ln, _ln_grad, _load, _mm, _mma, _store


@triton.jit
def ttt_mlp_chain_kernel(XQ, XK, XV, GATE, TOK, B2, LNW, LNB, W1S, B1S, W2S, ZQS, Z1S, XBS, G2S, ZW, ST1, ST2,
                         NH, L, N, NB,
                         K: tl.constexpr, F: tl.constexpr, FP: tl.constexpr, H: tl.constexpr, HP: tl.constexpr,
                         HB: tl.constexpr, BF: tl.constexpr, DT: tl.constexpr, C: tl.constexpr,
                         SAVE: tl.constexpr = False):
    # Saves per token: Z1 (Z1S [.., L, HP]), X2bar (XBS), G2 (G2S [.., L, FP]),
    # X2bar W2 + b2 (ZW, [B, nh, L, f] like the output). ZQS [K, HP] holds
    # Q W1 + b1 from pass 1 to pass 2.
    # NB = cdiv(f, BF), the row tiles of W1 that hold true rows (tiles of
    # padding only are zero and skipped), is a run-time argument on purpose:
    # with a constant trip count LLVM unrolls the row-tile loops and the
    # unrolled tiles' operands are live at once (ptxas spilled 64 B at f=64
    # float32 that way, none this way).
    # SAVE (for the backward, inner_bwd_mlp.py): the state at the start
    # of every mini-batch n >= 1, unpadded, [W1; b1] to ST1 [B*nh, N, F+1, H]
    # and [W2; b2] to ST2 [B*nh, N, H+1, F], stored from pass 2's updates as
    # they are written back (values already in a store's layout, not the
    # pass-1 tiles in a dot's operand layout), b2 at the start of every step.
    # The launcher copies n = 0's W1, b1, W2 (the parameters) itself.
    PAD: tl.constexpr = F != FP
    HPAD: tl.constexpr = H != HP  # hidden units padded to a multiple of HB
    pid = tl.program_id(0)
    h = pid % NH
    rk, rf, rh, rb = tl.arange(0, K), tl.arange(0, FP), tl.arange(0, HB), tl.arange(0, BF)
    cm = rf[None, :] < F
    xbase, gbase = pid * L * F, pid * L
    hbase = pid.to(tl.int64) * L * HP
    w1s, b1s, w2s, zqs = W1S + pid * FP * HP, B1S + pid * HP, W2S + pid * HP * FP, ZQS + pid * K * HP
    kh = rk[:, None] * HP + rh[None, :]  # the first hidden tile of a [K, HP] block
    b2 = _load(B2 + h * F + rf, rf < F, PAD)[None, :]
    lnw, lnb = _load(LNW + h * F + rf, rf < F, PAD)[None, :], _load(LNB + h * F + rf, rf < F, PAD)[None, :]
    tok = tl.load(TOK + rk)
    tok_last = tl.load(TOK + K - 1)
    causal = rk[:, None] >= rk[None, :]
    st1 = ST1 + pid.to(tl.int64) * N * (F + 1) * H
    st2 = ST2 + pid.to(tl.int64) * N * (H + 1) * F
    for n in range(N):
        if SAVE:
            _store(st2 + n * (H + 1) * F + H * F + rf[None, :], b2, cm, PAD)
        row = xbase + (n * K + rk) * F
        xo = row[:, None] + rf[None, :]
        k, v = _load(XK + xo, cm, PAD), _load(XV + xo, cm, PAD)
        g = tl.load(GATE + gbase + n * K + rk).to(tl.float32)
        e = (tok_last * g)[:, None]  # eta_last, one weight a token
        zs = Z1S + hbase + n * K * HP
        z2 = tl.zeros([K, FP], tl.float32) + b2
        for c in range(HP // HB):
            hc = c * HB + rh
            b1 = tl.load(b1s + hc)[None, :]
            z1 = tl.zeros([K, HB], tl.float32) + b1
            zq = tl.zeros([K, HB], tl.float32) + b1
            for j in range(NB):
                fc = j * BF + rb
                w = tl.load(w1s + fc[:, None] * HP + hc[None, :])  # [BF, HB]
                z1 = _mma(_load(XK + row[:, None] + fc[None, :], fc[None, :] < F, PAD), w, z1, DT)
                zq = _mma(_load(XQ + row[:, None] + fc[None, :], fc[None, :] < F, PAD), w, zq, DT)
            tl.store(zs + kh + c * HB, z1)
            tl.store(zqs + kh + c * HB, zq)
            z2 = _mma(_gelu(z1, C), tl.load(w2s + hc[:, None] * FP + rf[None, :]), z2, DT)
        G2 = _ln_grad(z2, v - k, lnw, lnb, F, cm, PAD)
        g2r = G2S + pid.to(tl.int64) * L * FP + (n * K + rk)[:, None] * FP  # this mini-batch's rows of G2S
        tl.store(g2r + rf[None, :], G2)
        zw = tl.zeros([K, FP], tl.float32) + b2
        b2 = b2 - tl.sum(G2 * e, axis=0)[None, :]
        qk = tl.zeros([K, K], tl.float32)  # Q Kx^T, BF columns at a time (a [K, FP] FMA operand pins FP registers)
        for j in range(NB):
            fc = j * BF + rb
            qk = _mma(_load(XQ + row[:, None] + fc[None, :], fc[None, :] < F, PAD),
                      _load(XK + row[None, :] + fc[:, None], fc[:, None] < F, PAD), qk, DT)
        m1 = tl.where(causal, tok[:, None] * g[None, :] * (qk + 1.0), 0.0)
        tl.debug_barrier()  # pass 1's reads of W1 and b1 are done; Z1, ZQ and G2 are visible to every thread
        for c in range(HP // HB):
            hc = c * HB + rh
            x2, dx2 = _gelu_and_prime(tl.load(zs + kh + c * HB), C)
            w2p = w2s + hc[:, None] * FP + rf[None, :]
            w2 = tl.load(w2p)  # [HB, FP]: this mini-batch's W2 rows
            # G1 = (G2 W2^T) * gelu'(Z1). An FMA (float32) product holds each
            # thread's rows of its first operand over the whole reduction, so
            # G2 [K, FP] would pin FP registers through the loop (spills at
            # f=96): it comes from G2S BF columns at a time. An MMA operand is
            # packed, and G2 stays in registers (fewer registers, per ptxas).
            if DT == tl.float32:
                g1 = tl.zeros([K, HB], tl.float32)
                for j in range(NB):
                    fc = j * BF + rb
                    g1 = _mma(tl.load(g2r + fc[None, :]), tl.trans(tl.load(w2s + hc[:, None] * FP + fc[None, :])),
                              g1, DT)
            else:
                g1 = _mm(G2, tl.trans(w2), DT)
            g1 = g1 * dx2
            x2bar = _gelu(tl.load(zqs + kh + c * HB) - _mm(m1, g1, DT), C)
            tl.store(XBS + hbase + n * K * HP + kh + c * HB, x2bar)
            zw = _mma(x2bar, w2, zw, DT)
            eg1 = g1 * e
            tl.debug_barrier()  # every read of these W2 rows is done before they are overwritten
            if DT == tl.float32:  # W2 -= X2^T (eta_last G2), G2 as above
                w2n = w2 - _mm(tl.trans(x2 * e), tl.load(g2r + rf[None, :]), DT)
            else:
                w2n = w2 - _mm(tl.trans(x2), G2 * e, DT)
            tl.store(w2p, w2n)
            b1n = tl.load(b1s + hc) - tl.sum(eg1, axis=0)
            tl.store(b1s + hc, b1n)
            if SAVE:  # the state at the start of mini-batch n+1 (none is kept after the last)
                s1, s2 = st1 + (n + 1) * (F + 1) * H, st2 + (n + 1) * (H + 1) * F
                live = rf[None, :] < (N - 1 - n) * FP  # a tensor: the interpreter takes no scalar mask
                if PAD:
                    live = live & cm
                if HPAD:
                    live = live & (hc[:, None] < H)
                tl.store(s2 + hc[:, None] * F + rf[None, :], w2n, mask=live)
                blive = hc < (N - 1 - n) * HP
                if HPAD:
                    blive = blive & (hc < H)
                tl.store(s1 + F * H + hc, b1n, mask=blive)
            for j in range(NB):  # padded rows of W1 stay zero: their rows of Kx^T are
                fc = j * BF + rb
                kt = _load(XK + row[None, :] + fc[:, None], fc[:, None] < F, PAD)  # [BF, K] = Kx^T rows
                wp = w1s + fc[:, None] * HP + hc[None, :]
                w1n = tl.load(wp) - _mm(kt, eg1, DT)
                tl.store(wp, w1n)
                if SAVE:
                    live1 = hc[None, :] < (N - 1 - n) * HP
                    if PAD:
                        live1 = live1 & (fc[:, None] < F)
                    if HPAD:
                        live1 = live1 & (hc[None, :] < H)
                    tl.store(st1 + (n + 1) * (F + 1) * H + fc[:, None] * H + hc[None, :], w1n, mask=live1)
        _store(ZW + xo, zw, cm, PAD)
        tl.debug_barrier()  # the new state is visible to every thread before the next pass 1


@triton.jit
def ttt_mlp_out_kernel(XQ, GATE, TOK, LNW, LNB, Z1S, XBS, G2S, ZW, OUT, NH, L,
                       K: tl.constexpr, F: tl.constexpr, FP: tl.constexpr, HP: tl.constexpr, HB: tl.constexpr,
                       DT: tl.constexpr, C: tl.constexpr):
    # One program per (sequence, head, mini-batch), from the chain's saves.
    # OUT may be ZW (each element is read, then written, by this program only).
    PAD: tl.constexpr = F != FP
    pid, n = tl.program_id(0), tl.program_id(1)
    h = pid % NH
    rk, rf, rh = tl.arange(0, K), tl.arange(0, FP), tl.arange(0, HB)
    cm = rf[None, :] < F
    xo = (pid * L * F + (n * K + rk) * F)[:, None] + rf[None, :]
    hs = pid.to(tl.int64) * L * HP + (n * K + rk)[:, None] * HP + rh[None, :]
    a = tl.zeros([K, K], tl.float32)  # X2bar X2^T, over the hidden tiles
    for c in range(HP // HB):
        a = _mma(tl.load(XBS + hs + c * HB), tl.trans(_gelu(tl.load(Z1S + hs + c * HB), C)), a, DT)
    g = tl.load(GATE + pid * L + n * K + rk).to(tl.float32)
    tok = tl.load(TOK + rk)
    m2 = tl.where(rk[:, None] >= rk[None, :], tok[:, None] * g[None, :] * (a + 1.0), 0.0)
    G2 = tl.load(G2S + pid.to(tl.int64) * L * FP + (n * K + rk)[:, None] * FP + rf[None, :])
    zbar = _load(ZW + xo, cm, PAD) - _mm(m2, G2, DT)
    lnw, lnb = _load(LNW + h * F + rf, rf < F, PAD)[None, :], _load(LNB + h * F + rf, rf < F, PAD)[None, :]
    _store(OUT + xo, _load(XQ + xo, cm, PAD) + _ln(zbar, lnw, lnb, F, cm, PAD), cm, PAD)


# Launch settings per dtype of the products: (num_warps, HB hidden units a
# tile, BF rows of W1 a tile, num_stages). Not timed yet: chosen as the
# largest tiles with no spills for sm_90 at both f=64 and f=96 in float32
# and bfloat16 (scripts/dev/triton/ttt_compile_check.py --sweep; ptxas of Triton 3.9): 8 warps
# (one program per SM, so 255 registers a thread cost no occupancy), HB=BF=32
# (255/255/174/233 registers at f64 fp32, f96 fp32, f64 bf16, f96 bf16). HB=64
# spills at f=96 (a [HB, FP] FMA operand), 4 warps spill in float32; 16
# warps cap registers at 128 and spill. num_stages 1: the loops hold state
# reads and writes in one scratch, which a software pipeliner must not reorder.
MLP_LAUNCH = {torch.float32: (8, 32, 32, 1), torch.bfloat16: (8, 32, 32, 1), torch.float16: (8, 32, 32, 1)}
# float32 at f <= 64 (125m, 350m, 1b) takes (4, 64, 32, 1): the fastest of
# scripts/dev/triton/mlp_launch_sweep.py on the H100 (docs/results/tuning.md#triton-ttt-mlp-launch
# has the sweep), faster than the fastest that compiles for sm_90 without a spill. It spills about
# 0.7 KiB a thread, which costs less than half as many hidden tiles saves;
# KNOWN_SPILL_BYTES is that allowance, and the compile checks hold the chain
# kernel to it there (and to zero everywhere else).
MLP_LAUNCH_F32_SMALL = (4, 64, 32, 1)
KNOWN_SPILL_BYTES = 1024


def spill_allowance(kernel: str, dtype: torch.dtype, fp: int) -> int:
    """Spill bytes a thread the compile checks accept for kernel ("mlp
    chain", ...) at its default launch settings."""
    if kernel == "mlp chain" and dtype == torch.float32 and fp <= 64 and not _overridden():
        return KNOWN_SPILL_BYTES
    return 0


def _overridden() -> bool:
    return any(os.environ.get("XBENCH_TRITON_" + k) for k in ("WARPS", "HB", "BF", "STAGES"))
OUT_WARPS = 4


def _env_int(name: str, default: int) -> int:
    env = os.environ.get(name)
    return int(env) if env else default


def pow2_at_least_16(n: int) -> int:
    return max(16, triton.next_power_of_2(n))


def mlp_launch(dtype: torch.dtype, fp: int, hidden: int) -> tuple:
    """(num_warps, HB, BF, num_stages, out-kernel warps); XBENCH_TRITON_WARPS,
    _HB, _BF, _STAGES and _OUT_WARPS override (for a sweep on the GPU). HB is
    at most the hidden width and BF at most FP, both powers of two >= 16."""
    nw, hb, bf, st = MLP_LAUNCH_F32_SMALL if dtype == torch.float32 and fp <= 64 else MLP_LAUNCH[dtype]
    hb = min(pow2_at_least_16(_env_int("XBENCH_TRITON_HB", hb)), pow2_at_least_16(hidden))
    bf = min(pow2_at_least_16(_env_int("XBENCH_TRITON_BF", bf)), fp)
    return (_env_int("XBENCH_TRITON_WARPS", nw), hb, bf, _env_int("XBENCH_TRITON_STAGES", st),
            _env_int("XBENCH_TRITON_OUT_WARPS", OUT_WARPS))


def ttt_mlp(xq, xk, xv, gate, f32: dict, tok, out, dt, states=None) -> None:
    """The mlp inner loop into out [B, nh, L, f] (float32): xq/xk/xv/gate
    contiguous, f32 the layer's inner parameters in float32, tok the
    per-row learning rates [K], dt the products' tl dtype. states: see
    model.ttt_inner."""
    B, nh, L, f = xq.shape
    K, hid, dev = tok.shape[0], f32["W1"].shape[-1], xq.device
    fp = pow2_at_least_16(f)
    nw, hb, bf, st, onw = mlp_launch(xq.dtype, fp, hid)
    hp = triton.cdiv(hid, hb) * hb
    w1s = torch.zeros((B, nh, fp, hp), device=dev, dtype=torch.float32)
    w1s[:, :, :f, :hid] = f32["W1"]  # every sequence starts from its head's state
    b1s = torch.zeros((B, nh, hp), device=dev, dtype=torch.float32)
    b1s[:, :, :hid] = f32["b1"]
    w2s = torch.zeros((B, nh, hp, fp), device=dev, dtype=torch.float32)
    w2s[:, :, :hid, :f] = f32["W2"]
    zqs = torch.empty((B * nh, K, hp), device=dev, dtype=torch.float32)
    z1s = torch.empty((B * nh, L, hp), device=dev, dtype=torch.float32)
    xbs = torch.empty((B * nh, L, hp), device=dev, dtype=torch.float32)
    g2s = torch.empty((B * nh, L, fp), device=dev, dtype=torch.float32)
    if states is not None:  # mini-batch 0 starts from the parameters; the kernel saves the rest (and every b2)
        st1 = states[0].view(B, nh, L // K, f + 1, hid)
        st1[:, :, 0, :f] = f32["W1"]
        st1[:, :, 0, f] = f32["b1"]
        states[1].view(B, nh, L // K, hid + 1, f)[:, :, 0, :hid] = f32["W2"]
    save = states if states is not None else (w1s, w1s)  # pointers that SAVE=False never writes
    # out holds X2bar W2 + b2 between the two kernels
    ttt_mlp_chain_kernel[(B * nh,)](xq, xk, xv, gate, tok, f32["b2"], f32["ln_w"], f32["ln_b"], w1s, b1s, w2s,
                                    zqs, z1s, xbs, g2s, out, *save, nh, L, L // K, triton.cdiv(f, bf), K=K, F=f,
                                    FP=fp, H=hid, HP=hp, HB=hb, BF=bf, DT=dt, C=GELU_C, SAVE=states is not None,
                                    num_warps=nw, num_stages=st)
    ttt_mlp_out_kernel[(B * nh, L // K)](xq, gate, tok, f32["ln_w"], f32["ln_b"], z1s, xbs, g2s, out, out, nh, L,
                                         K=K, F=f, FP=fp, HP=hp, HB=hb, DT=dt, C=GELU_C, num_warps=onw)
