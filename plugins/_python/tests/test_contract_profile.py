"""The optional "profile" op: warm-up outside the profiler, the profiled
calls inside it, the report's fields, refusals, and self times from nested
trace events."""
import json

import pytest

from xbench_py import types as xt
from xbench_py import profile as xprofile
from xbench_py import serve


class Toy(xt.Framework):
    """A workload "toy" whose step counts calls; profile() records how many
    calls had run before the profiler started and how many ran inside."""

    name = "toy"
    capabilities = xt.Capabilities(xt.WorkloadCaps("toy", phases=("forward",), devices=("cpu",)))

    def __init__(self):
        self.calls = 0
        self.before = self.inside = None

    def prepare_toy(self, cfg, variant, device, seed):
        def step():
            self.calls += 1
        return xt.Prepared(step=step)

    def profile(self, device, body, trace_path):
        self.before = self.calls
        body()
        self.inside = self.calls - self.before
        with open(trace_path, "w") as f:
            json.dump({"traceEvents": [{"name": "k", "ph": "X", "ts": 0, "dur": 5, "pid": 1, "tid": 1}]}, f)
        return {"profiler": "toy profiler", "time_kind": "host", "kernels": [{"name": "k", "self_ms": 0.005, "count": 2}]}


class Plain(xt.Framework):
    name = "plain"
    capabilities = Toy.capabilities


def request(tmp_path, **over):
    req = {"workload": "toy", "device": "cpu", "calls": 2, "trace_path": str(tmp_path / "t.json"),
           "config": {"workload": "toy", "phase": "forward", "params": {}, "warmup": 3, "repeats": 10}}
    req.update(over)
    return req


def test_profile_warms_up_outside_and_profiles_inside(tmp_path):
    fw = Toy()
    rep = serve._handle(fw, "profile", {"request": request(tmp_path)})["profile"]
    assert fw.before == 1 + 3, "the first call and the warm-up calls run before the profiler"
    assert fw.inside == 2, "exactly `calls` calls run under the profiler"
    assert rep["status"] == "ok" and rep["calls"] == 2 and rep["profiler"] == "toy profiler"
    assert rep["time_kind"] == "host" and rep["kernels"] == [{"name": "k", "self_ms": 0.005, "count": 2}]
    assert rep["wall_ms"] >= 0 and rep["trace_path"] == str(tmp_path / "t.json")
    assert json.load(open(tmp_path / "t.json"))["traceEvents"]


def test_profile_unsupported_and_refused(tmp_path):
    rep = serve._handle(Toy(), "profile", {"request": request(tmp_path, device="cuda")})["profile"]
    assert rep["status"] == "unsupported" and "device cuda" in rep["message"]
    with pytest.raises(xt.ConfigError, match="cannot profile"):
        serve._handle(Plain(), "profile", {"request": request(tmp_path)})
    for bad in ({"calls": 0}, {"calls": "3"}, {"trace_path": "relative.json"}, {"trace_path": None}):
        with pytest.raises(xt.ConfigError, match="calls|trace_path"):
            serve._handle(Toy(), "profile", {"request": request(tmp_path, **bad)})


def test_profile_failure_is_a_status(tmp_path):
    class Broken(Toy):
        def profile(self, device, body, trace_path):
            raise RuntimeError("no profiler today")
    rep = serve._handle(Broken(), "profile", {"request": request(tmp_path)})["profile"]
    assert rep["status"] == "failed" and rep["message"] == "RuntimeError: no profiler today"


def test_self_times_subtract_nested_events():
    ev = [{"name": "while", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
          {"name": "dot", "ts": 10, "dur": 30, "pid": 1, "tid": 1},
          {"name": "dot", "ts": 50, "dur": 20, "pid": 1, "tid": 1},
          {"name": "dot", "ts": 0, "dur": 40, "pid": 1, "tid": 2}]  # another thread: not nested
    got = xprofile.self_times(ev)
    assert got["while"] == pytest.approx([0.05, 1]) and got["dot"] == pytest.approx([0.09, 3])
