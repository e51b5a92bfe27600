"""The contract in-process: capability rules (workload, phase, device, values,
max), the config's JSON type checks, the OOM classifier, failure messages,
run_batch, and the GEMM wiring through a framework's GEMM module."""

import sys
import types

import pytest

from xbench_py import types as xt
from xbench_py import workloads as xw
from xbench_py import runner as xr
from xbench_py import tensors


def caps():
    return xt.Capabilities(
        xt.WorkloadCaps("ttt", phases=("forward", "inner_only"), devices=("cpu", "cuda"),
                        values={"dtype": ("float32", "bfloat16"), "ttt_type": ("linear",)}, max={"seq_len": 8192}),
        xt.WorkloadCaps("gemm", phases=("forward",), devices=("cpu",)),
    )


@pytest.mark.parametrize("cfg,device,words", [
    (xt.Config("conv", "forward", {}), "cpu", ["workload conv", "supported: ttt, gemm"]),
    (xt.Config("ttt", "backward", {}), "cpu", ["phase backward", "supported: forward, inner_only"]),
    (xt.Config("ttt", "forward", {}), "rocm", ["device rocm", "supported: cpu, cuda"]),
    (xt.Config("ttt", "forward", {"dtype": "float16"}), "cpu", ["dtype float16", "supported: float32, bfloat16"]),
    (xt.Config("ttt", "forward", {"ttt_type": "mlp"}), "auto", ["ttt_type mlp", "supported: linear"]),
    (xt.Config("ttt", "forward", {"seq_len": "8193"}), "cpu", ["seq_len 8193", "at most 8192"]),
    (xt.Config("gemm", "forward", {"dtype": "float8_e4m3", "layout": "tt"}), "cuda", ["device cuda"]),
])
def test_refusals_name_what_and_what_is_supported(cfg, device, words):
    why = caps().refusal(cfg, device, "b")
    assert why and all(w in why for w in words), why


@pytest.mark.parametrize("cfg,device", [
    (xt.Config("ttt", "forward", {"dtype": "bfloat16", "seq_len": "8192", "mini_batch": "99999"}), "auto"),
    (xt.Config("ttt", "inner_only", {}), "cuda"),
    (xt.Config("gemm", "forward", {"dtype": "anything", "m": str(1 << 40)}), "cpu"),  # no values: every value
])
def test_inside_capabilities(cfg, device):
    assert caps().refusal(cfg, device, "b") is None


def test_capabilities_json():
    assert caps().to_json()["workloads"][0] == {
        "workload": "ttt", "phases": ["forward", "inner_only"], "devices": ["cpu", "cuda"],
        "values": {"dtype": ["float32", "bfloat16"], "ttt_type": ["linear"]}, "max": {"seq_len": 8192}}
    assert caps().to_json()["workloads"][1] == {"workload": "gemm", "phases": ["forward"], "devices": ["cpu"]}


def test_config_type_checks_only():
    d = {"workload": "ttt", "phase": "forward", "params": {"seq_len": "30", "mini_batch": "16", "batch": "0"},
         "warmup": 0, "repeats": 1}
    cfg = xt.Config.from_json(d)  # no range or cross checks: the harness did them
    assert cfg.to_json() == d and xw.TTT.from_config(cfg).seq_len == 30
    for bad, word in ((None, "object"), ({"colour": 1}, "unknown"), ({"params": {"batch": 1}}, "strings"),
                      ({"warmup": True}, "integer"), ({"params": []}, "object"), ({"phase": 2}, "string")):
        with pytest.raises(xt.ConfigError, match=word):
            xt.Config.from_json(bad)
    with pytest.raises(xt.ConfigError, match="decimal"):
        xw.TTT.from_config(xt.Config("ttt", params={"batch": "2.5"}))


def test_big_integers_are_not_truncated():
    g = xw.Gemm.from_config(xt.Config("gemm", params={"m": str(1 << 40), "n": "1", "k": "1", "batch": "1"}))
    assert g.m == 1 << 40 and g.to_params()["m"] == "1099511627776"


def test_views_round_trip():
    t = xw.TTT(model_size="tiny", phase="inner_only", seq_len=64)
    cfg = t.config()
    assert cfg.params["seq_len"] == "64" and cfg.phase == "inner_only"
    back = xw.TTT.from_config(cfg)
    assert back == t and back.inner_only and not back.backward and back.size.hidden == 64
    g = xw.Gemm(m=2, n=3, k=4, batch=5, layout="tn")
    assert g.stored_shapes() == ((5, 4, 2), (5, 4, 3))
    assert xw.Gemm(m=2, n=3, k=4, batch=5, layout="nt").stored_shapes() == ((5, 2, 4), (5, 3, 4))


class FakeOOM(Exception):
    pass


FakeOOM.__name__ = "OutOfMemoryError"


@pytest.mark.parametrize("exc,oom", [
    (FakeOOM("anything"), True),
    (MemoryError(), True),
    (RuntimeError("CUDA out of memory. Tried to allocate 2 GiB"), True),
    (RuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate"), True),
    (RuntimeError("shape mismatch"), False),
    # PyTorch's CPU allocator, as torch 2.x words it
    (RuntimeError("[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate memory: "
                  "you tried to allocate 6597069766656 bytes. Error code 12 (Cannot allocate memory)"), True),
    (OSError(12, "Cannot allocate memory"), True),
])
def test_one_oom_classifier(exc, oom):
    assert xt.is_oom(exc) is oom


def test_numpy_and_torch_cpu_allocation_failures_are_oom():
    # The real errors, not their words: an array and a tensor far beyond any host.
    import numpy as np
    import torch

    for make in (lambda: np.empty(1 << 62, dtype=np.uint8), lambda: torch.empty(1 << 50, dtype=torch.uint8)):
        with pytest.raises(BaseException) as info:
            make()
        assert xt.is_oom(info.value), f"{type(info.value).__name__}: {info.value}"


def test_oom_markers_are_the_harness_list():
    # One classifier: the Go harness's list reaches the contract through the
    # generated facts (whose freshness the Go and facts tests check); the
    # words every framework here uses are in it.
    from xbench_py import facts

    assert xt.OOM_MARKERS == facts.OOM_MARKERS == tuple(facts.DOC["oom_markers"])
    for word in ("out of memory", "resource_exhausted", "outofmemoryerror", "memoryerror"):
        assert word in xt.OOM_MARKERS


def test_failure_message_ends_with_the_exception_line():
    assert xt.failure_message(ValueError("bad shape")) == "ValueError: bad shape"
    msg = xt.failure_message(RuntimeError("line one\n\n  line two  \n"))
    assert msg.splitlines()[-1] == "RuntimeError: line one line two"
    assert xt.failure_message(KeyError()) == "KeyError"


def gemm_module():
    mod = types.SimpleNamespace(DTYPES={"cpu": ("float32",), "cuda": ("float32", "float8_e4m3")}, calls=[])

    def prepare(params, device, seed):
        mod.calls.append((dict(params), device, seed))
        return lambda: None

    def export(params, device, a, b):
        return a @ b
    mod.prepare, mod.export = prepare, export
    return mod


class GemmOnly(xt.Framework):
    name = "g"
    gemm = gemm_module()
    capabilities = xt.Capabilities(xt.gemm_caps(gemm, ("cpu", "rocm")))


def test_gemm_caps_and_run_batch():
    fw = GemmOnly()
    w = fw.capabilities.to_json()["workloads"][0]
    assert w["values"]["dtype"] == ["float32", "float8_e4m3"] and w["values"]["layout"] == ["nn", "nt", "tn", "tt"]
    assert xt.gemm_caps(None, ("cpu",)) is None and xt.Capabilities(None).workloads == ()
    cfgs = [xw.Gemm(m=4, n=4, k=4, repeats=2, warmup=0, dtype=dt).config() for dt in ("float32", "float8_e4m3")]
    cfgs.append(xw.TTT(model_size="tiny").config())
    recs = xr.run_batch(fw, [(c, "", "cpu", 3) for c in cfgs])
    assert [r["status"] for r in recs] == ["ok", "unsupported", "unsupported"]
    assert "float8_e4m3" in recs[1]["message"] and "on cpu" in recs[1]["message"]
    assert "workload ttt" in recs[2]["message"]
    assert fw.gemm.calls == [({"m": "4", "n": "4", "k": "4", "batch": "1", "layout": "nn", "dtype": "float32"},
                              "cpu", 3)]


class Counting(xt.Framework):
    """A GEMM framework that counts its step calls and release()s, and can
    fail a chosen release() (the n-th, 1-based)."""
    name = "g"
    gemm = gemm_module()
    capabilities = xt.Capabilities(xt.gemm_caps(gemm, ("cpu",)))

    def __init__(self, release_fails=()):
        super().__init__()
        self.steps, self.releases, self.release_fails = 0, 0, release_fails
        self.gemm = gemm_module()
        prepare = self.gemm.prepare

        def counted(params, device, seed):
            prepare(params, device, seed)

            def step():
                self.steps += 1
            return step
        self.gemm.prepare = counted

    def release(self):
        self.releases += 1
        if self.releases in self.release_fails:
            raise RuntimeError("release broke")


def test_run_batch_runs_each_request_as_run_does():
    """The same checks, warmup, repeats, timer and release() per request:
    a batch makes the same calls and the same records as runs one by one."""
    cfgs = [xw.Gemm(m=4, n=4, k=4, warmup=w, repeats=r).config() for w, r in ((0, 2), (3, 5), (1, 1))]
    cfgs.append(xw.Gemm(m=4, n=4, k=4, dtype="float8_e4m3").config())  # unsupported on cpu
    one, two = Counting(), Counting()
    singles = [xr.run(one, c, "", "cpu", 7) for c in cfgs]
    batch = xr.run_batch(two, [(c, "", "cpu", 7) for c in cfgs])
    assert [r["status"] for r in batch] == [r["status"] for r in singles] == ["ok", "ok", "ok", "unsupported"]
    assert one.steps == two.steps and one.releases == two.releases == len(cfgs)
    assert one.gemm.calls == two.gemm.calls  # prepare saw the same params, device and seed
    for a, b, c in zip(singles, batch, cfgs):
        assert b["config"] == a["config"] == c.to_json()
        assert len(b["samples_ms"]) == len(a["samples_ms"]) == (c.repeats if a["status"] == "ok" else 0)
        assert b["env"]["timing"] == a["env"]["timing"] and b.get("message") == a.get("message")


def test_run_batch_failing_request_is_its_own_result():
    """A request whose run() raises (here its release()) is a failed record in
    its slot; the requests after it still run."""
    fw = Counting(release_fails=(2,))
    cfgs = [xw.Gemm(m=4, n=4, k=4, repeats=2, warmup=0).config() for _ in range(3)]
    recs = xr.run_batch(fw, [(c, "", "cpu", 0) for c in cfgs])
    assert [r["status"] for r in recs] == ["ok", "failed", "ok"]
    assert recs[1]["message"] == "RuntimeError: release broke" and recs[1]["samples_ms"] == []
    assert recs[1]["config"] == cfgs[1].to_json() and recs[1]["device"]["kind"] == "cpu"
    assert fw.releases == 3 and len(recs[2]["samples_ms"]) == 2


def test_gemm_export(tmp_path):
    import numpy as np

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((1, 3, 5), dtype=np.float32), rng.standard_normal((1, 5, 2), dtype=np.float32)
    tensors.write_safetensors(str(tmp_path / "in.st"), {"a": a, "b": b})
    g = xw.Gemm(m=3, n=2, k=5)
    rep = xr.export(GemmOnly(), g, "", "cpu", "", str(tmp_path / "in.st"), str(tmp_path / "out.st"))
    assert rep["status"] == "ok", rep
    np.testing.assert_allclose(tensors.read_safetensors(str(tmp_path / "out.st"))["c"], a @ b, rtol=1e-6)
    # the harness's empty weights file, or a 0-byte one, is no weights either
    tensors.write_safetensors(str(tmp_path / "w.st"), {})
    (tmp_path / "w0.st").write_bytes(b"")
    for w in ("w.st", "w0.st"):
        rep = xr.export(GemmOnly(), g, "", "cpu", str(tmp_path / w), str(tmp_path / "in.st"), str(tmp_path / "out.st"))
        assert rep["status"] == "ok", rep
    bad = xr.export(GemmOnly(), xw.Gemm(m=3, n=2, k=5, layout="tn"), "", "cpu", "", str(tmp_path / "in.st"),
                    str(tmp_path / "out.st"))
    assert bad["status"] == "failed" and "'a'" in bad["message"] and "[1, 5, 3]" in bad["message"]


def test_device_outside_protocol_is_a_config_error():
    with pytest.raises(xt.ConfigError, match="tpu"):
        xr.run(GemmOnly(), xw.Gemm(), "", "tpu")


def test_no_stats_module():
    assert "xbench_stats" not in sys.modules
    with pytest.raises(ImportError):
        __import__("xbench_stats")
