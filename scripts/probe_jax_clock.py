"""Probe for issue 31 (run by scripts/probe-jax-clock.sh on the GPU machine):
does NVIDIA's cupti-python record the kernels of a JAX call, and how does the
CUPTI span (first kernel start to last kernel end) of a bf16 4096^3 matmul
compare with xbench's host clock today and with torch's CUDA events for the
same matmul? Also: a null call (one tiny kernel) through every clock, and
torch's events with CUPTI tracing on vs off (the mechanism's own cost).

  python3 probe_jax_clock.py [--quick] [--preload /path/libcupti.so.13]
--quick: import, record one jax matmul, print its records, exit.
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--quick", action="store_true")
p.add_argument("--preload", default="")
p.add_argument("--n", type=int, default=4096)
p.add_argument("--reps", type=int, default=30)
args = p.parse_args()

if args.preload:
    # cuda.pathfinder (used by cupti-python) takes a libcupti already loaded.
    ctypes.CDLL(args.preload, mode=ctypes.RTLD_GLOBAL)
    print(f"preloaded {args.preload}")

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "plugins", "_python"))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

print("jax", jax.__version__, jax.devices())
n = args.n
ka, kb = jax.random.split(jax.random.PRNGKey(0))
a = jax.random.normal(ka, (n, n), jnp.bfloat16)
b = jax.random.normal(kb, (n, n), jnp.bfloat16)
mm = jax.jit(lambda x, y: x @ y)
jax.block_until_ready(mm(a, b))
tiny_in = jnp.ones((1,), jnp.float32)
tiny = jax.jit(lambda x: x + 1)
jax.block_until_ready(tiny(tiny_in))

t0 = time.perf_counter()
from cupti import cupti  # noqa: E402

print(f"import cupti ok ({(time.perf_counter()-t0)*1e3:.0f} ms) from {cupti.__file__}")
try:
    with open("/proc/self/maps") as f:
        libs = sorted({line.split()[-1] for line in f if "libcupti" in line})
    print("libcupti mapped:", libs)
except OSError:
    pass

records = []


def requested():
    return 8 * 1024 * 1024, 0


def completed(activities):
    for r in activities:
        records.append((int(r.kind), int(getattr(r, "start", 0)), int(getattr(r, "end", 0)),
                        str(getattr(r, "name", "") or "")))


cupti.activity_register_callbacks(requested, completed)
KINDS = (cupti.ActivityKind.CONCURRENT_KERNEL, cupti.ActivityKind.MEMCPY, cupti.ActivityKind.MEMSET)
t0 = time.perf_counter()
for k in KINDS:
    cupti.activity_enable(k)
print(f"activity_enable ok ({(time.perf_counter()-t0)*1e3:.1f} ms)")


def drain():
    cupti.activity_flush_all(int(cupti.ActivityFlag.FLUSH_FORCED))
    out = list(records)
    records.clear()
    return out


def span_of(fn, sync):
    """One CUPTI sample: drained before, call + sync, drained after; span of
    the records in between (ms) and the records."""
    drain()
    sync(fn())
    recs = [r for r in drain() if r[2] > r[1] > 0]
    if not recs:
        return float("nan"), recs
    return (max(r[2] for r in recs) - min(r[1] for r in recs)) / 1e6, recs


def host_of(fn, sync):
    t0 = time.perf_counter()
    sync(fn())
    return (time.perf_counter() - t0) * 1e3


jsync = jax.block_until_ready
s, recs = span_of(lambda: mm(a, b), jsync)
print(f"first jax matmul sample: span {s:.4f} ms, {len(recs)} records:")
for r in recs[:10]:
    print(f"   kind {r[0]} dur {(r[2]-r[1])/1e3:.1f} us  {r[3][:90]}")
if args.quick:
    sys.exit(0 if recs else 3)

med = statistics.median
rows = []


def report(label, vals, flop=None):
    m = med(vals)
    tf = f"{flop / (m * 1e-3) / 1e12:7.0f}" if flop else "      -"
    rows.append(f"{label:<58} {m:9.4f} ms  min {min(vals):8.4f}  TFLOP/s {tf}")
    print(rows[-1], flush=True)


flop = 2.0 * n ** 3
R = args.reps
# 1) jax: host clock (xbench BlockTimer today) with CUPTI on, then the CUPTI span.
report("jax mm: host clock + block (CUPTI on)", [host_of(lambda: mm(a, b), jsync) for _ in range(R)], flop)
report("jax mm: CUPTI span", [span_of(lambda: mm(a, b), jsync)[0] for _ in range(R)], flop)
t0 = time.perf_counter()
for _ in range(50):
    o = mm(a, b)
jsync(o)
report("jax mm: 50 calls amortized (CUPTI on)", [(time.perf_counter() - t0) * 1e3 / 50], flop)
kcount = [len(span_of(lambda: mm(a, b), jsync)[1]) for _ in range(5)]
print("jax mm: records per call:", kcount)
# xbench's own jax GEMM (float32 accumulation, then a cast to bf16): is the
# cast a kernel of its own on the GPU?
try:
    from xbench_jax import gemm

    xg = jax.jit(gemm.gemm_fn("nn", "bfloat16", gpu=True))
    a3, b3 = a[None], b[None]
    jsync(xg(a3, b3))
    s, recs = span_of(lambda: xg(a3, b3), jsync)
    print(f"xbench xbench_jax.gemm bf16: span {s:.4f} ms, {len(recs)} records:", [r[3][:60] for r in recs])
    report("xbench xbench_jax.gemm bf16: CUPTI span", [span_of(lambda: xg(a3, b3), jsync)[0] for _ in range(R)], flop)
except Exception as e:  # noqa: BLE001
    print("xbench xbench_jax.gemm part failed:", type(e).__name__, e)

# 1b) xbench's jax scan (T=1024 C=12 K=4 batch 4 log, forward): a while loop
# of many small kernels, where CUPTI's per-launch host cost could widen the
# gaps between kernels and so enter the span.
scan_step = None
try:
    from xbench_py import workloads as xw
    from xbench_jax import scan

    scfg = xw.Scan(T=1024, K=4, C=12, batch=4, semiring="log", phase="forward")
    scan_step = scan.prepare(scfg, jax.devices()[0], 0).step
    jsync(scan_step())
    print("jax scan: records per call:", len(span_of(scan_step, jsync)[1]))
    report("jax scan fwd T1024: host clock + block (CUPTI on)", [host_of(scan_step, jsync) for _ in range(10)])
    report("jax scan fwd T1024: CUPTI span", [span_of(scan_step, jsync)[0] for _ in range(10)])
except Exception as e:  # noqa: BLE001
    print("jax scan part failed:", type(e).__name__, e)

# 2) null call: one tiny kernel.
report("jax null (x+1 on 1 float): host clock + block", [host_of(lambda: tiny(tiny_in), jsync) for _ in range(R)])
report("jax null (x+1 on 1 float): CUPTI span", [span_of(lambda: tiny(tiny_in), jsync)[0] for _ in range(R)])
empty = [span_of(lambda: tiny_in, jsync)[1] for _ in range(5)]
print("no-kernel call: records per call:", [len(e) for e in empty])

# 3) torch: CUDA events for the same matmul, CUPTI on then off; CUPTI span of torch's call.
try:
    import torch

    ta = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    tb = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    tz = torch.ones(1, device="cuda")
    for _ in range(3):
        ta @ tb
    torch.cuda.synchronize()

    def ev(fn):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        return s.elapsed_time(e)

    tsync = lambda _: torch.cuda.synchronize()  # noqa: E731
    report("torch mm: CUDA events (CUPTI on)", [ev(lambda: ta @ tb) for _ in range(R)], flop)
    report("torch mm: CUPTI span", [span_of(lambda: ta @ tb, tsync)[0] for _ in range(R)], flop)
    report("torch null (tz+1): CUDA events (CUPTI on)", [ev(lambda: tz + 1) for _ in range(R)])
    report("torch null (tz+1): CUPTI span", [span_of(lambda: tz + 1, tsync)[0] for _ in range(R)])
    for k in KINDS:
        cupti.activity_disable(k)
    drain()
    report("torch mm: CUDA events (CUPTI off)", [ev(lambda: ta @ tb) for _ in range(R)], flop)
    report("torch null (tz+1): CUDA events (CUPTI off)", [ev(lambda: tz + 1) for _ in range(R)])
    report("jax mm: host clock + block (CUPTI off)", [host_of(lambda: mm(a, b), jsync) for _ in range(R)], flop)
    if scan_step is not None:
        report("jax scan fwd T1024: host clock + block (CUPTI off)", [host_of(scan_step, jsync) for _ in range(10)])
except Exception as e:  # the probe reports, it does not stop at torch
    print("torch part failed:", type(e).__name__, e)

print("\n=== summary (medians of", R, "samples, n =", n, ")")
print("\n".join(rows))
