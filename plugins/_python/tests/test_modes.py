"""Timing modes through the contract: the request's mode reaches the timing
loop (a flush before every timed call and never inside one, a graph replay),
is recorded in the result, and a timer that cannot honour it makes the
result unsupported with the reason."""

import io
import json
import sys

import pytest

from xbench_py import types as xt
from xbench_py import workloads as xw
from xbench_py import runner as xr
from xbench_py import modes
from xbench_py import serve
from xbench_py.types import Mode


class Log:
    def __init__(self):
        self.events = []


class LoggingTimer(xt.Timer):
    """Records the order of flushes, timed calls and graph captures."""

    def __init__(self, log, kind="cpu", graphs=True):
        self.log, self.kind, self.graphs = log, kind, graphs

    def time(self, fn):
        self.log.events.append("start")
        fn()
        self.log.events.append("end")
        return 1.0

    def flush(self):
        self.log.events.append("flush")

    def graph(self, fn):
        if not self.graphs:
            return super().graph(fn)
        self.log.events.append("capture")

        def replay():
            self.log.events.append("replay")
            fn()
        return replay


def framework(timer_factory, devices=("cpu",)):
    mod = type("M", (), {"DTYPES": {"cpu": ("float32",), "cuda": ("float32",)}})()
    mod.prepare = lambda params, device, seed: (lambda: None)

    class F(xt.Framework):
        name = "f"
        gemm = mod
        capabilities = xt.Capabilities(xt.gemm_caps(mod, devices))

        def timer(self, device):
            return timer_factory(device)

        def resolve_device(self, requested):
            return xt.Device("cpu" if requested in ("auto", "cpu") else requested, "x", count=1)
    return F()


CFG = xw.Gemm(m=4, n=4, k=4, warmup=1, repeats=3)


def test_cold_cache_flushes_before_every_timed_call_and_is_recorded():
    log = Log()
    rec = xr.run(framework(lambda d: LoggingTimer(log)), CFG, "", "cpu", 0, Mode(cold_cache=True))
    assert rec["status"] == "ok", rec
    assert rec["mode"] == {"cold_cache": True}
    ev = log.events
    # compile call, one warmup, the allocating flush, then flush before each of the 3 samples
    assert ev[:4] == ["start", "end", "start", "end"]
    assert ev[4:] == ["flush"] + ["flush", "start", "end"] * 3
    assert len(rec["samples_ms"]) == 3


def test_warm_records_no_mode_and_never_flushes():
    log = Log()
    rec = xr.run(framework(lambda d: LoggingTimer(log)), CFG, "", "cpu")
    assert rec["status"] == "ok" and "mode" not in rec and "flush" not in log.events


def test_cuda_graph_replays_after_the_compile_call():
    log = Log()
    rec = xr.run(framework(lambda d: LoggingTimer(log)), CFG, "", "cpu", 0, Mode(cuda_graph=True))
    assert rec["status"] == "ok" and rec["mode"] == {"cuda_graph": True}
    assert log.events[:3] == ["start", "end", "capture"]
    assert log.events.count("replay") == 1 + 3  # warmup and samples replay the graph; the compile call does not


def test_unhonoured_modes_are_unsupported_with_the_reason():
    rec = xr.run(framework(lambda d: LoggingTimer(Log(), graphs=False)), CFG, "", "cpu", 0, Mode(cuda_graph=True))
    assert rec["status"] == "unsupported" and "CUDA graphs are not available" in rec["message"]
    # A GPU timer that inherits the host flush cannot flush a GPU's L2.
    fw = framework(lambda d: xt.Timer(), devices=("cpu", "cuda"))
    rec = xr.run(fw, CFG, "", "cuda", 0, Mode(cold_cache=True))
    assert rec["status"] == "unsupported" and "no device cache flush" in rec["message"], rec


def test_cpu_flush_writes_more_than_the_llc():
    n = modes.cpu_flush()
    assert n >= max(2 * modes.llc_bytes(), modes.MIN_CPU_FLUSH_BYTES)
    before = int(modes._cpu_buffer[12345])
    modes.cpu_flush()
    assert int(modes._cpu_buffer[12345]) == (before + 1) % 256


def test_serve_passes_the_mode_and_refuses_a_bad_one(monkeypatch):
    log = Log()
    fw = framework(lambda d: LoggingTimer(log))
    lines = [
        {"id": 1, "op": "run", "request": {"workload": "gemm", "device": "cpu", "config": CFG.config().to_json(),
                                           "mode": {"cold_cache": True}}},
        {"id": 2, "op": "run_batch", "requests": [{"workload": "gemm", "device": "cpu", "config": CFG.config().to_json(),
                                                   "mode": {"cuda_graph": True}}]},
        {"id": 3, "op": "run", "request": {"workload": "gemm", "device": "cpu", "config": CFG.config().to_json(),
                                           "mode": {"cold_cache": "yes"}}},
        {"id": 4, "op": "run", "request": {"workload": "gemm", "device": "cpu", "config": CFG.config().to_json(),
                                           "mode": {"hot": True}}},
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(json.dumps(x) for x in lines) + "\n"))
    out = io.StringIO()
    assert serve.serve(fw, out) == 0
    replies = [json.loads(x) for x in out.getvalue().splitlines()]
    assert replies[0]["result"]["mode"] == {"cold_cache": True} and "flush" in log.events
    assert replies[1]["results"][0]["mode"] == {"cuda_graph": True}
    assert "mode.cold_cache must be true or false" in replies[2]["error"]
    assert "unknown field(s) hot" in replies[3]["error"]


@pytest.mark.parametrize("mode,text", [(Mode(), "warm"), (Mode(cold_cache=True), "cold-cache"),
                                       (Mode(True, True), "cold-cache+cuda-graph")])
def test_mode_names_match_the_harness(mode, text):
    assert str(mode) == text and Mode.from_json(mode.to_json()) == mode
