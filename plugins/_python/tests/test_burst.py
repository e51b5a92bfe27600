"""xbench_py.burst, the backend's half of the harness's outside clock check:
burst_prepare prepares and calls once, burst calls the kept step exactly as
often as asked and times nothing (the harness's Go side times it)."""

import types

import pytest

from xbench_py import burst
from xbench_py import serve
from xbench_py import types as xt
from xbench_py import workloads as xw


class Stepping(xt.Framework):
    """A GEMM framework that counts the calls of its prepared step."""
    name = "s"

    def __init__(self, fail=None, gpu=False):
        super().__init__()
        self.steps, self.gpu = 0, gpu
        mod = types.SimpleNamespace(DTYPES={"cpu": ("float32",)})

        def prepare(params, device, seed):
            if fail:
                raise fail

            def step():
                self.steps += 1
            return step
        mod.prepare = prepare
        self.gemm = mod
        self.capabilities = xt.Capabilities(xt.gemm_caps(mod, ("cpu", "cuda")))


    def resolve_device(self, device):
        # gpu: a machine with one, so that the CPU-only refusal is burst's own
        return xt.Device("cuda", "fake", count=1) if self.gpu else super().resolve_device(device)


CFG = xw.Gemm(m=4, n=4, k=4).config()


def test_prepare_then_burst_calls_the_step_as_often_as_asked():
    fw = Stepping()
    assert burst.prepare(fw, CFG, "", "cpu") == {"status": "ok"}
    assert fw.steps == 1  # the first call, outside any burst
    assert burst.run({"calls": 37}) == {"status": "ok", "calls": 37}
    assert burst.run({"calls": 3}) == {"status": "ok", "calls": 3}  # a second round on the same step
    assert fw.steps == 1 + 37 + 3


@pytest.mark.parametrize("fw,device,status,words", [
    (Stepping(gpu=True), "cuda", "unsupported", "burst runs on the CPU only; s resolved cuda to cuda"),
    (Stepping(fail=ValueError("bad shape")), "cpu", "failed", "ValueError: bad shape"),
    (Stepping(fail=MemoryError()), "cpu", "oom", "MemoryError"),
])
def test_prepare_failures_are_reported_as_a_run_reports_them(fw, device, status, words):
    rep = burst.prepare(fw, CFG, "", device)
    assert rep["status"] == status and words in rep["message"]
    with pytest.raises(xt.ConfigError, match="prepared by burst_prepare first"):
        burst.run({"calls": 1})  # nothing kept from a failed prepare


@pytest.mark.parametrize("req", [{"calls": 0}, {"calls": -1}, {"calls": True}, {"calls": 1.5},
                                 {"calls": burst.MAX_CALLS + 1}, {}, None])
def test_bad_burst_requests_are_config_errors(req):
    burst.prepare(Stepping(), CFG, "", "cpu")
    with pytest.raises(xt.ConfigError):
        burst.run(req)


def test_serve_answers_both_ops():
    fw = Stepping()
    req = {"workload": "gemm", "device": "cpu", "config": CFG.to_json()}
    assert serve._handle(fw, "burst_prepare", {"request": req}) == {"burst": {"status": "ok"}}
    assert serve._handle(fw, "burst", {"request": {"calls": 5}}) == {"burst": {"status": "ok", "calls": 5}}
    assert fw.steps == 6
