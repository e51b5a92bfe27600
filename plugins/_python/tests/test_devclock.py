"""The device clock (xbench_py.devclock): the span arithmetic on synthetic
activity records, the CUPTI source's handling of records and callbacks
(through a stand-in for cupti-python: the code around CUPTI, not CUPTI), the
timer's order of drains and calls, and the labels env.timing gets where
there is no device clock. That CUPTI itself reads the kernels right is shown
on the GPU by scripts/h100-clock.sh, not here."""

import enum

import pytest

from xbench_py import types as xt
from xbench_py import workloads as xw
from xbench_py import runner as xr
from xbench_py import devclock as dc
from xbench_py.devclock import Activity


def A(start, end, kind="kernel"):
    return Activity(kind, start, end)


@pytest.mark.parametrize("records,want", [
    ([A(1000, 3000)], 0.002),  # one kernel: its duration
    ([A(1000, 3000), A(3500, 9000)], 0.008),  # the gap between kernels is in the span
    ([A(5000, 9000), A(1000, 2000)], 0.008),  # order of delivery does not matter
    ([A(1000, 9000), A(2000, 3000, "memcpy")], 0.008),  # overlapping (concurrent) work counts once
    ([A(1000, 2000), A(0, 0), A(4000, 3000)], 0.001),  # incomplete records (0 or end < start) are left out
    ([A(1_000_000_000_000, 1_000_000_004_500, "memset")], 0.0045),  # absolute ns timestamps
])
def test_span_is_first_start_to_last_end(records, want):
    assert dc.span_ms(records) == pytest.approx(want)


def test_no_complete_record_is_an_error_not_a_zero():
    for recs in ([], [A(0, 5)], [A(10, 5)]):
        with pytest.raises(dc.NoActivity, match="no complete kernel"):
            dc.span_ms(recs)


def test_busy_time_leaves_the_gaps_out():
    recs = [A(1000, 3000), A(2000, 4000), A(6000, 7000)]
    assert dc.busy_ms(recs) == pytest.approx(0.004)
    with pytest.raises(dc.NoActivity):
        dc.busy_ms([A(0, 5)])  # start 0: not complete, as span_ms
    assert dc.span_ms(recs) == pytest.approx(0.006)


class FakeCupti:
    """cupti-python's activity surface, recording what the source calls;
    flush_all delivers the pending records to the registered callback."""

    class ActivityKind(enum.IntEnum):
        MEMCPY = 1
        MEMSET = 2
        CONCURRENT_KERNEL = 10
        DRIVER = 5

    class ActivityFlag(enum.IntEnum):
        FLUSH_FORCED = 1

    def __init__(self):
        self.calls, self.enabled, self.pending, self.cb = [], set(), [], None

    def activity_register_callbacks(self, requested, completed):
        self.calls.append("register")
        self.cb = (requested, completed)

    def activity_enable(self, kind):
        self.enabled.add(int(kind))

    def activity_disable(self, kind):
        self.enabled.discard(int(kind))

    def activity_flush_all(self, flag):
        self.calls.append(("flush", flag))
        if self.pending:
            recs, self.pending = self.pending, []
            self.cb[1](recs)

    def emit(self, kind, start, end, name=""):
        rec = type("Rec", (), {"kind": int(kind), "start": start, "end": end, "name": name})()
        self.pending.append(rec)


def test_source_enables_kernels_copies_and_sets_and_keeps_only_those():
    c = FakeCupti()
    src = dc.CuptiSource(c)
    src.start()
    K = FakeCupti.ActivityKind
    assert c.enabled == {int(K.CONCURRENT_KERNEL), int(K.MEMCPY), int(K.MEMSET)}
    assert c.cb[0]() == (dc.CuptiSource.BUFFER_BYTES, 0)
    c.emit(K.CONCURRENT_KERNEL, 100, 200, "gemm")
    c.emit(K.DRIVER, 50, 300)  # an API record: host time, never in a span
    c.emit(K.MEMSET, 250, 260)
    got = src.drain()
    assert got == [Activity("kernel", 100, 200, "gemm"), Activity("memset", 250, 260, "")]
    assert ("flush", 1) in c.calls and src.drain() == []
    src.stop()
    assert not c.enabled and not src.active


class ScriptedSource:
    """A source whose records are what the call made: drain hands over the
    records emitted since the last drain."""

    def __init__(self):
        self.active, self.pending, self.log = False, [], []

    def start(self):
        self.active = True
        self.log.append("start")

    def drain(self):
        self.log.append("drain")
        out, self.pending = self.pending, []
        return out

    def stop(self):
        self.active = False
        self.log.append("stop")


class HostTimer(xt.Timer):
    description = "a host clock"
    label = "host-clock-block"

    def __init__(self, log):
        self.log = log

    def time(self, fn):
        self.log.append("call")
        fn()
        return 99.0  # the host reading: never the sample

    def flush(self):
        self.log.append("flush")


def test_span_timer_samples_only_the_calls_records():
    src = ScriptedSource()
    t = dc.SpanTimer(HostTimer(src.log), src)
    src.pending = [A(1, 10**9)]  # left over from before the call: drained and dropped
    ms = t.time(lambda: src.pending.extend([A(2000, 5000), A(6000, 7000)]))
    assert ms == pytest.approx(0.005)
    assert src.log == ["start", "drain", "call", "drain"]
    assert t.description.startswith(dc.CUPTI_SPAN) and "a host clock" in t.description
    # compile_ms is the host time of the first call (compilation is host work)
    assert t.first(lambda: None) == 99.0
    t.flush()
    assert src.log[-1] == "flush" and xt.has_device_flush(t)
    t.close()
    assert src.log[-1] == "stop"


def test_a_call_without_device_work_fails_loudly():
    src = ScriptedSource()
    t = dc.SpanTimer(HostTimer(src.log), src)
    with pytest.raises(dc.NoActivity):
        t.time(lambda: None)


@pytest.fixture
def no_cupti(monkeypatch):
    monkeypatch.setattr(dc, "_source", None)
    monkeypatch.setattr(dc, "_why_not", "")
    monkeypatch.setitem(__import__("sys").modules, "cupti", None)  # import fails as where it is not installed


def test_without_cupti_the_framework_clock_stays_and_says_why(no_cupti):
    t = dc.device_timer(HostTimer([]), "cuda")
    assert type(t) is HostTimer
    assert t.description.startswith("host-clock-block: a host clock (CUPTI unavailable"), t.description


def test_rocm_and_cpu_labels(no_cupti):
    assert dc.device_timer(HostTimer([]), "rocm").description.startswith("host-clock-block: a host clock (ROCm: no CUPTI")
    assert dc.device_timer(xt.Timer(), "cpu").description == "host-clock: time.perf_counter"


def test_xbench_clock_host_turns_the_device_clock_off(monkeypatch):
    monkeypatch.setattr(dc, "_source", None)
    monkeypatch.setattr(dc, "_why_not", "")
    monkeypatch.setenv("XBENCH_CLOCK", "host")
    assert "XBENCH_CLOCK=host" in dc.device_timer(HostTimer([]), "cuda").description


def test_runner_samples_are_spans_on_a_gpu_and_compile_is_host(monkeypatch):
    """Through the contract's run(): on a (pretend) GPU every Python backend's
    samples come from the device clock, env.timing says so, and the source
    is stopped after the run."""
    src = ScriptedSource()
    monkeypatch.setattr(dc, "cupti_source", lambda: (src, ""))
    mod = type("M", (), {"DTYPES": {"cuda": ("float32",)}})()
    n = {"calls": 0}

    def prepare(params, device, seed):
        def step():
            n["calls"] += 1
            src.pending.append(A(1000, 1000 + 1000 * n["calls"]))
        return step
    mod.prepare = prepare

    class F(xt.Framework):
        name = "f"
        gemm = mod
        capabilities = xt.Capabilities(xt.gemm_caps(mod, ("cuda",)))

        def timer(self, device):
            return HostTimer(src.log)

        def resolve_device(self, requested):
            return xt.Device("cuda", "gpu", count=1)

    rec = xr.run(F(), xw.Gemm(m=2, n=2, k=2, warmup=1, repeats=3), "", "cuda")
    assert rec["status"] == "ok", rec
    assert rec["compile_ms"] == 99.0  # the first call: host time
    # calls 10..12: 1 is the compile call, 2 the warmup, then calibration after it: 3..5 untraced,
    # 6 a traced call dropped (CUPTI's own start), 7..9 traced
    assert rec["samples_ms"] == pytest.approx([0.010, 0.011, 0.012])
    assert rec["env"]["timing"].startswith(dc.CUPTI_SPAN)
    assert src.log[-1] == "stop"


@pytest.mark.parametrize("traced,untraced,records,idle,bound", [
    (0.1985, 0.316, 2, 0.1, False),  # H100 jax 4096^3 bf16 matmul (probe): device-bound
    (0.1981, 0.1915, 1, 0.0, False),  # H100 torch 4096^3: span a little above untraced events, within its spread
    (31.35, 18.96, 4103, 0.9, True),  # H100 jax scan T=1024: tracing slowed the call past its untraced time
    (5.0, 6.0, 400, 0.5, True),  # many kernels, device idle half the span: the host launches set the pace
    (5.0, 6.0, 400, 0.05, False),  # many kernels back to back: device-bound
    (5.0, 6.0, 10, 0.6, False),  # few records: CUPTI's per-launch cost is a few us at most
])
def test_launch_bound_rule(traced, untraced, records, idle, bound):
    assert bool(dc.launch_bound(traced, untraced, records, idle)) == bound


def test_calibrate_switches_a_launch_bound_call_to_the_untraced_clock():
    src = ScriptedSource()

    class Slow(HostTimer):
        def time(self, fn):
            fn()
            return 1.0  # the untraced call: 1 ms on the framework's clock

    t = dc.SpanTimer(Slow(src.log), src)
    step = lambda: src.pending.append(A(0 + 1, 2_000_000))  # noqa: E731  traced: a 2 ms span
    t.calibrate(step)
    assert t.untraced and not src.active
    assert t.description.startswith("host-clock-block: a host clock (launch-bound call, CUPTI tracing off:")
    assert t.time(step) == 1.0  # the samples: the framework's own clock


def test_calibrate_keeps_the_span_for_a_device_bound_call():
    src = ScriptedSource()
    t = dc.SpanTimer(HostTimer(src.log), src)  # untraced: 99 ms on the host
    step = lambda: src.pending.append(A(1, 2_000_000))  # noqa: E731
    t.calibrate(step)
    assert not t.untraced and src.active and t.description.startswith(dc.CUPTI_SPAN)


def test_calibrate_times_a_few_record_call_whose_gaps_tracing_widened_on_its_busy_time():
    # XLA's memset before a cuBLAS GEMM: traced, the kernel starts 0.3 ms
    # after the memset (the host's launch slowed by tracing), longer than the
    # whole untraced call; the records' busy time is the call's device work.
    src = ScriptedSource()

    class Untraced(HostTimer):
        def time(self, fn):
            fn()
            return 0.13  # the whole call untraced, host clock included

    def step():
        src.pending += [A(1_000, 1_700), A(301_000, 311_000)]  # memset 0.7 us, gap 299 us, kernel 10 us

    t = dc.SpanTimer(Untraced(src.log), src)
    t.calibrate(step)
    assert t.busy and not t.untraced and src.active
    assert t.description.startswith(dc.CUPTI_BUSY + ": ") and "launch-bound" not in t.description.split(":")[0]
    assert t.time(step) == pytest.approx(0.0107)


def test_calibrate_keeps_the_host_clock_for_a_many_record_launch_bound_call():
    src = ScriptedSource()

    class Untraced(HostTimer):
        def time(self, fn):
            fn()
            return 1.0

    def step():  # 20 tiny kernels 0.1 ms apart: the host sets the pace
        src.pending += [A(100_000 * i + 1, 100_000 * i + 2_000) for i in range(20)]

    t = dc.SpanTimer(Untraced(src.log), src)
    t.calibrate(step)
    assert t.untraced and not t.busy and t.description.startswith("host-clock-block")


def test_compile_done_in_prepare_is_added_to_compile_ms(monkeypatch):
    """Prepared.compile_ms (iree loads its module in prepare on a GPU, before
    tracing starts) is part of result.compile_ms, beside the first call."""
    src = ScriptedSource()
    monkeypatch.setattr(dc, "cupti_source", lambda: (src, ""))

    class F(xt.Framework):
        name = "f"
        capabilities = xt.Capabilities(xt.WorkloadCaps("gemm", phases=("forward",), devices=("cuda",),
                                                       values={"dtype": ("float32",)}))

        def prepare_gemm(self, cfg, variant, device, seed):
            return xt.Prepared(step=lambda: src.pending.append(A(1000, 3000)), compile_ms=5.0)

        def timer(self, device):
            return HostTimer(src.log)

        def resolve_device(self, requested):
            return xt.Device("cuda", "gpu", count=1)

    rec = xr.run(F(), xw.Gemm(m=2, n=2, k=2, warmup=1, repeats=3), "", "cuda")
    assert rec["status"] == "ok", rec
    assert rec["compile_ms"] == 104.0  # prepare's 5 ms + the first call's 99 ms (host)
