"""One conformance suite for every Python backend: each backend is loaded as
its benchmark.py loads it (plugins/*/plugin.json, runtime python), and every
workload it declares with a float64 reference here (gemm, attention, scan) is
exported through the contract (xbench_py.runner.export: safetensors in and
out, as `xbench verify` does) on the CPU and compared with that reference.

The matrix is the same for every backend, read from its capabilities:
  gemm       float32 in every layout (batch 1 and 3), every other declared
             dtype in one layout
  attention  every declared phase, causal and not, GQA, odd sizes; the
             low-precision dtypes on the both (or forward) phase
  scan       three odd shapes (K 1 to 5, variable lengths), every declared
             semiring and dtype, forward
A variant that runs on the CPU gets float32 at one shape (attention: each
phase, causal), so every variant is checked without multiplying the
default's matrix. A declared
dtype the CPU lacks (jax's float16, pytorch's tf32) must be answered
unsupported, naming it; float32 must run. What is particular to one backend
(its timed step, kernels, gradients against another implementation, its
refusals) stays in that backend's tests/."""

import dataclasses
import glob
import json
import os
import runpy

import numpy as np
import pytest

from xbench_py.attention_ref import reference as attention_reference
from xbench_py.attention_ref import rel
from xbench_py import runner as xr
from xbench_py import scan_ref
from xbench_py import tensors
from xbench_py import workloads as xw

PLUGINS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUITE = ("gemm", "attention", "scan")


def manifests() -> dict:
    out = {}
    for path in sorted(glob.glob(os.path.join(PLUGINS, "*", "plugin.json"))):
        with open(path) as f:
            m = json.load(f)
        if m.get("runtime") == "python":
            out[m["name"]] = dict(m, dir=os.path.dirname(path))
    return out


MANIFESTS = manifests()
_LOADED = {}


def framework(name: str):
    """The backend's Framework as its benchmark.py makes it, once a session."""
    if name not in _LOADED:
        m = MANIFESTS[name]
        entry = runpy.run_path(os.path.join(m["dir"], m["entry"]), run_name="xbench_conformance")
        fw = entry["load"]()
        fw.name, fw.description = m["name"], m.get("description", "")
        _LOADED[name] = fw
    return _LOADED[name]


def caps_on_cpu(fw, variant: str, workload: str):
    caps = fw.capabilities if not variant else next(v.capabilities for v in fw.variants if v.name == variant)
    w = caps.of(workload)
    return w if w is not None and "cpu" in w.devices else None


GEMM_SHAPES = [("nn", 1), ("nt", 3), ("tn", 3), ("tt", 1)]
GEMM_TOL = {"float32": 1e-5, "bfloat16": 2e-2, "float16": 2e-3, "tf32": 2e-3, "float8_e4m3": 1e-1}
ATTENTION_TOL = {"float32": 1e-5, "bfloat16": 2e-2, "float16": 5e-3}
# T, K, C, batch: K = 1 (every segment one long), K = 5 (the widest ring),
# odd C, batch 1 and 3, variable lengths (scan_ref.fixtures)
SCAN_SHAPES = [(9, 1, 2, 3), (17, 4, 3, 3), (20, 5, 4, 1)]
SCAN_TOL = {"float64": 1e-12, "float32": 2e-6}


def _cases(name: str, variant: str, workload: str, w) -> list:
    default = variant == ""
    dtypes = w.values.get("dtype", ())
    if workload == "gemm":
        # float32 in every layout; each other dtype in one (nt, then tn, ...)
        low = [dt for dt in dtypes if dt != "float32"]
        cases = [("float32", lay, b) for lay, b in (GEMM_SHAPES if default else GEMM_SHAPES[1:2])]
        cases += [(dt, *GEMM_SHAPES[1 + i % 3]) for i, dt in enumerate(low) if default]
        return [xw.Gemm(m=17, n=33, k=40, batch=b, layout=lay, dtype=dt, warmup=0, repeats=1) for dt, lay, b in cases]
    if workload == "attention":
        head_dims = w.values.get("head_dim", ("24",))  # 24: not a power of two, where a backend takes any
        d = int(head_dims[0])
        phases = [p for p in ("forward", "backward", "both") if p in w.phases]
        out = [xw.Attention(batch=2, heads=4, kv_heads=2, seq_len=13, head_dim=d, causal=c, dtype="float32", phase=p)
               for p in phases for c in ((False, True) if default else (True,))]
        low = "both" if "both" in phases else phases[0]
        out += [xw.Attention(batch=1, heads=4, kv_heads=1, seq_len=13, head_dim=d, causal=True, dtype=dt, phase=low)
                for dt in dtypes if dt != "float32" and default]
        return out
    if workload == "scan":
        semirings = w.values.get("semiring", ())
        if not default:
            T, K, C, B = SCAN_SHAPES[1]
            return [xw.Scan(T=T, K=K, C=C, batch=B, semiring=semirings[0], dtype=dtypes[0])]
        return [xw.Scan(T=T, K=K, C=C, batch=B, semiring=s, dtype=dt)
                for T, K, C, B in SCAN_SHAPES for s in semirings for dt in dtypes]
    raise AssertionError(workload)


def _cell_id(cfg) -> str:
    p = cfg.to_params()
    return "-".join([cfg.phase] + [f"{k}{v}" for k, v in p.items() if k not in ("dtype",)] + [p.get("dtype", "")])


def cells() -> list:
    out = []
    for name, m in MANIFESTS.items():
        declared = [w for w in m.get("workloads", ()) if w in SUITE]
        if not declared:
            continue
        fw = framework(name)
        for variant in [""] + [v.name for v in fw.variants]:
            for workload in declared:
                w = caps_on_cpu(fw, variant, workload)
                if w is None:
                    continue
                for cfg in _cases(name, variant, workload, w):
                    vid = f"{name}/{variant}" if variant else name
                    out.append(pytest.param(name, variant, cfg, id=f"{vid}-{workload}-{_cell_id(cfg)}"))
    return out


def _round(x: np.ndarray, dtype: str) -> np.ndarray:
    """Inputs exactly representable in dtype, so a low-precision backend is
    judged on its arithmetic, not on rounding its inputs."""
    if dtype in ("bfloat16", "float16"):
        import ml_dtypes

        return x.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16).astype(np.float32)
    return x


def _inputs_and_reference(cfg) -> tuple:
    rng = np.random.default_rng(1)
    if cfg.workload == "gemm":
        sa, sb = cfg.stored_shapes()
        a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
        opa = a if cfg.layout[0] == "n" else np.swapaxes(a, 1, 2)
        opb = b if cfg.layout[1] == "n" else np.swapaxes(b, 1, 2)
        return {"a": a, "b": b}, {"c": np.matmul(opa.astype(np.float64), opb.astype(np.float64))}
    if cfg.workload == "attention":
        shapes = {"q": cfg.q_shape(), "k": cfg.k_shape(), "v": cfg.k_shape(), "dout": cfg.q_shape()}
        x = {n: _round(rng.standard_normal(shapes[n]).astype(np.float32), cfg.dtype) for n in ("q", "k", "v", "dout")
             if n != "dout" or cfg.backward}
        ref = attention_reference(x["q"], x["k"], x["v"], x.get("dout"), cfg.causal)
        return x, dict(zip(("out", "dq", "dk", "dv"), ref))
    x = scan_ref.fixtures(cfg, 1)
    ft = np.float64 if cfg.dtype == "float64" else np.float32
    x = {k: (v if k == "lengths" else v.astype(ft)) for k, v in x.items()}
    return x, {"out": scan_ref.forward(cfg, x)}


def _close(cfg, name: str, got: np.ndarray, want: np.ndarray) -> bool:
    if cfg.workload == "scan":  # per sequence: the largest error against the largest score
        return np.abs(got.astype(np.float64) - want).max() <= SCAN_TOL[cfg.dtype] * np.abs(want).max()
    tol = (GEMM_TOL if cfg.workload == "gemm" else ATTENTION_TOL)[cfg.dtype]
    return rel(got, want) < tol


@pytest.mark.parametrize("name,variant,cfg", cells())
def test_export_matches_the_float64_reference(tmp_path, name, variant, cfg):
    fw = framework(name)
    x, want = _inputs_and_reference(cfg)
    ip, op = str(tmp_path / "inputs.safetensors"), str(tmp_path / "out.safetensors")
    tensors.write_safetensors(ip, x)
    rep = xr.export(fw, cfg, variant, "cpu", "", ip, op)
    if rep["status"] == "unsupported" and cfg.dtype != "float32":
        # a dtype declared for the workload that this device lacks: refused by name
        assert cfg.dtype in rep["message"], rep
        return
    assert rep["status"] == "ok", rep
    got = tensors.read_safetensors(op)
    outputs = cfg.outputs() if hasattr(cfg, "outputs") else ("c",)
    assert sorted(got) == sorted(outputs)
    for n in outputs:
        want_dtype = np.float64 if cfg.output_float64() else np.float32
        assert got[n].shape == want[n].shape and got[n].dtype == want_dtype, n
        assert np.isfinite(got[n]).all(), n
        assert _close(cfg, n, got[n], want[n]), (n, rel(got[n], want[n]))


def test_every_backend_with_a_suite_workload_is_in_the_suite():
    ids = {p.values[0] for p in cells()}
    want = {n for n, m in MANIFESTS.items() if set(m.get("workloads", ())) & set(SUITE)}
    assert ids == want and want >= {"pytorch", "jax", "triton", "iree", "flash-semicrf"}


@pytest.mark.parametrize("name", sorted(MANIFESTS))
def test_plugin_json_lists_the_workloads_it_implements(name):
    """The harness starts a backend for a workload only when its plugin.json
    "workloads" lists it (when --backends does not name it): a workload in
    the capabilities but not in plugin.json would never run by default, and
    one in plugin.json but not in the capabilities would start the backend
    for nothing."""
    fw = framework(name)
    implemented = set(fw.capabilities.names()) | {w for v in fw.variants for w in v.capabilities.names()}
    listed = set(MANIFESTS[name].get("workloads", ()))
    assert listed == implemented, (f"plugins/{os.path.basename(MANIFESTS[name]['dir'])}/plugin.json lists "
                                   f"{sorted(listed)}; its capabilities implement {sorted(implemented)}")


def run_cells() -> list:
    """One timed run per backend (prepare, the timer, the record): the first
    float32 case of its default variant, gemm first where it has one (each
    workload's prepared step is its own tests' matter)."""
    out = {}
    for p in sorted(cells(), key=lambda p: SUITE.index(p.values[2].workload)):
        name, variant, cfg = p.values
        if variant == "" and cfg.dtype == "float32" and name not in out:
            out[name] = pytest.param(name, variant, cfg, id=f"{name}-{cfg.workload}")
    return list(out.values())


@pytest.mark.parametrize("name,variant,cfg", run_cells())
def test_run_records_its_samples(name, variant, cfg):
    import jsonschema

    with open(os.path.join(os.path.dirname(PLUGINS), "schema", "result.schema.json")) as f:
        schema = json.load(f)
    cfg = dataclasses.replace(cfg, warmup=1, repeats=2)
    rec = xr.run(framework(name), cfg, variant, "cpu")
    jsonschema.validate(rec, schema)
    assert rec["status"] == "ok", rec
    assert rec["backend"] == name and rec["device"]["kind"] == "cpu"
    assert rec["config"] == cfg.config().to_json(), "the config is echoed as received"
    assert len(rec["samples_ms"]) == 2 and all(s >= 0 for s in rec["samples_ms"])
    assert rec["compile_ms"] >= 0 and rec["num_params"] == 0 and rec["env"]["framework"]
