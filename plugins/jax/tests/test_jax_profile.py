"""jax.profiler glue: lanes picked from a trace (device streams on a GPU,
XLA ops on the CPU), and a real CPU profile through the contract."""
import json

from xbench_py import workloads as xw
from xbench_py import profile as xprofile
from xbench_jax import backend
from xbench_jax import profile


def meta(pid, name, tid=None):
    e = {"ph": "M", "pid": pid, "name": "process_name" if tid is None else "thread_name", "args": {"name": name}}
    if tid is not None:
        e["tid"] = tid
    return e


def test_kernels_pick_the_device_streams_or_the_cpu_ops():
    ev = [meta(1, "/device:GPU:0"), meta(1, "Stream #14(Compute)", 7), meta(1, "XLA Ops", 8), meta(2, "/host:CPU"),
          {"ph": "X", "pid": 1, "tid": 7, "ts": 0, "dur": 50, "name": "sm90_xmma_gemm"},
          {"ph": "X", "pid": 1, "tid": 8, "ts": 0, "dur": 50, "name": "dot.1"},  # the same work again: not counted
          {"ph": "X", "pid": 2, "tid": 1, "ts": 0, "dur": 80, "name": "dot.1", "args": {"hlo_op": "dot.1"}}]
    assert profile.kernels(ev) == ("device", [{"name": "sm90_xmma_gemm", "self_ms": 0.05, "count": 1}])
    cpu_only = [e for e in ev if e.get("pid") == 2]
    assert profile.kernels(cpu_only) == ("host", [{"name": "dot.1", "self_ms": 0.08, "count": 1}])


def test_profile_on_cpu(tmp_path):
    fw = backend.Backend()
    fw.name = "jax"
    cfg = xw.TTT(model_size="tiny", ttt_type="linear", batch=1, seq_len=32, mini_batch=16, dtype="float32",
                 backbone="transformer", phase="forward", warmup=1, repeats=1).config()
    path = str(tmp_path / "jax.json")
    rep = xprofile.profile(fw, cfg, "", "cpu", 2, path)
    assert rep["status"] == "ok", rep.get("message")
    assert rep["time_kind"] == "host" and rep["profiler"].startswith("jax.profiler") and rep["kernels"]
    assert all(k["count"] % 2 == 0 for k in rep["kernels"]), "every op runs once per call, twice in all"
    assert json.load(open(path))["traceEvents"]
