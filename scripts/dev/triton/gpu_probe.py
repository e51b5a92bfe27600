"""One-off H100 probe: verify at 125m against pytorch float64, then first timings."""
import json
import os
import sys
import time
import traceback

# A development script of the triton backend (not part of it): plugins/_python
# (the contract xbench_py and the backend packages xbench_triton,
# xbench_pytorch, ...) goes first on the path, as benchmark.py puts it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLUGINS = os.path.join(ROOT, "plugins")
sys.path.insert(0, os.path.join(PLUGINS, "_python"))

T0 = time.time()
SIZE, DEV, TL = os.environ.get("PSIZE", "125m"), os.environ.get("PDEV", "cuda"), int(os.environ.get("PL", "2048"))
DEADLINE = float(os.environ.get("DEADLINE", "220"))
OUT = os.environ.get("OUT", "/tmp/out")
os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
import numpy as np  # noqa: E402

from xbench_py import workloads as xw  # noqa: E402
from xbench_py import spec as xs  # noqa: E402
from xbench_py import runner as xr  # noqa: E402

log = open(f"{OUT}/log.txt", "a")
recs = open(f"{OUT}/records.jsonl", "a")


def say(*a):
    line = f"[{time.time() - T0:6.1f}s] " + " ".join(str(x) for x in a)
    print(line, flush=True)
    log.write(line + "\n")
    log.flush()


def left():
    return DEADLINE - (time.time() - T0)


from xbench_pytorch import backend as tb  # noqa: E402
from xbench_jax import backend as jb  # noqa: E402
from xbench_triton import backend as trb  # noqa: E402
from xbench_pytorch import compiled  # noqa: E402

J, T, P = jb.Backend(), trb.Backend(), tb.Backend()
J.name, T.name, P.name = "jax", "triton", "pytorch"
say("imports done", {k: v for k, v in J.versions().items()}, T.versions().get("triton"), P.versions().get("torch"))


def perturbed(specs, seed=7):
    rng = np.random.default_rng(seed)
    out = {}
    for s in specs:
        scale = {"normal": 0.02, "ones": 0.1, "zeros": 0.05}[s.init]
        out[s.name] = ((1.0 if s.init == "ones" else 0.0) + scale * rng.standard_normal(s.shape, dtype=np.float32)).astype(np.float32)
        if s.name.endswith(("ttt.W1", "ttt.W2")):
            out[s.name] *= 10  # inner weights at a scale where the inner loop matters
    return out


PH = {True: "inner_only", False: "forward"}


def export(fw, cfg, variant, w, x):
    dev = fw.resolve_device(DEV)
    return next(iter(fw.export_ttt(cfg, variant, dev, w, x).values()))


def verify(ttt_type, inner_only, L=128, dtypes=("float32", "bfloat16"), who=(("jax", J, ""), ("triton", T, ""), ("pytorch/compile", P, "compile"), ("pytorch", P, ""))):
    size = xs.model_size(SIZE)
    specs = xs.inner_param_specs(size, ttt_type, 16) if inner_only else xs.param_specs(size, ttt_type, 16)
    w = perturbed(specs)
    x = xs.random_inner_inputs(1, size, L, 3) if inner_only else {"tokens": xs.random_tokens(1, L, size.vocab, 3)}
    ref = export(P, xw.TTT(model_size=SIZE, ttt_type=ttt_type, seq_len=L, phase=PH[inner_only], dtype="float64"), "", w, x).astype(np.float64)
    for dt in dtypes:
        for name, fw, var in who:
            if left() < 20:
                say("skip (deadline)", name, dt)
                continue
            t = time.time()
            try:
                got = export(fw, xw.TTT(model_size=SIZE, ttt_type=ttt_type, seq_len=L, phase=PH[inner_only], dtype=dt), var, w, x)
                r = np.linalg.norm(got - ref) / np.linalg.norm(ref)
                tol = 1e-4 if dt == "float32" else 5e-2
                say(f"VERIFY {SIZE} {ttt_type} {'inner' if inner_only else 'fwd'} L={L} {dt} {name}: rel {r:.3e} {'pass' if r <= tol else 'FAIL'} ({time.time() - t:.1f}s)")
            except Exception as e:  # noqa: BLE001
                say(f"VERIFY {name} {dt} ERROR {type(e).__name__}: {str(e)[:300]}")
                traceback.print_exc()
            fw.release()


def timing(label, fw, variant="", **kw):
    if left() < 15:
        say("skip (deadline)", label)
        return
    cfg = xw.TTT(model_size=SIZE, seq_len=TL, batch=1, mini_batch=16, warmup=2, repeats=5, **kw)
    t = time.time()
    rec = xr.run(fw, cfg, variant, DEV)
    recs.write(json.dumps({"label": label, **rec}) + "\n")
    recs.flush()
    if rec["status"] == "ok":
        s = rec["samples_ms"]
        say(f"TIME {label}: median {sorted(s)[len(s) // 2]:.3f} ms min {min(s):.3f} compile {rec['compile_ms'] / 1000:.1f}s "
            f"peak {rec['peak_memory_bytes'] / 2**20:.0f}MiB ({time.time() - t:.1f}s) {'; '.join(rec.get('warnings', []))[:200]}")
    else:
        say(f"TIME {label}: {rec['status']}: {rec.get('message', '')[:400]}")


try:
    verify("linear", False)
    timing("triton inner linear f32", T, ttt_type="linear", phase="inner_only")
    timing("triton inner linear bf16", T, ttt_type="linear", phase="inner_only", dtype="bfloat16")
    for nw in ("4", "16"):  # default for float32 linear is 8
        os.environ["XBENCH_TRITON_WARPS"] = nw
        timing(f"triton inner linear f32 warps={nw}", T, ttt_type="linear", phase="inner_only")
    os.environ.pop("XBENCH_TRITON_WARPS")
    for u in ("8", "1", "32"):
        os.environ["XBENCH_JAX_UNROLL"] = u
        timing(f"jax inner linear f32 unroll={u}", J, ttt_type="linear", phase="inner_only")
    os.environ.pop("XBENCH_JAX_UNROLL")
    timing("jax fwd linear f32", J, ttt_type="linear")
    timing("jax fwd linear bf16", J, ttt_type="linear", dtype="bfloat16")
    timing("compile fwd linear f32 (graph)", P, "compile", ttt_type="linear")
    timing("compile inner linear f32 (graph)", P, "compile", ttt_type="linear", phase="inner_only")
    compiled.USE_GRAPH = False
    timing("compile fwd linear f32 (no graph)", P, "compile", ttt_type="linear")
    compiled.USE_GRAPH = True
    timing("compile fwd linear bf16 (graph)", P, "compile", ttt_type="linear", dtype="bfloat16")
    timing("eager fwd linear f32", P, ttt_type="linear")
    timing("triton fwd linear f32", T, ttt_type="linear")
    timing("triton inner mlp f32", T, ttt_type="mlp", phase="inner_only")
    timing("triton inner mlp bf16", T, ttt_type="mlp", phase="inner_only", dtype="bfloat16")
    timing("jax fwd mlp f32", J, ttt_type="mlp")
    timing("jax inner mlp f32", J, ttt_type="mlp", phase="inner_only")
    verify("mlp", True, L=64, dtypes=("float32",), who=(("jax", J, ""), ("triton", T, ""), ("pytorch/compile", P, "compile")))
    timing("compile fwd mlp f32 (graph)", P, "compile", ttt_type="mlp")
    timing("jax bwd linear f32", J, ttt_type="linear", phase="backward")
except Exception:  # noqa: BLE001
    traceback.print_exc()
say("done")
