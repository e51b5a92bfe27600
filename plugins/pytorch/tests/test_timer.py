"""The CUDA event timer's cold-cache flush, checked on the CPU by recording
what it asks of torch: the memset must be followed by a synchronize, or the
memset still running at the start event hides the call's launch latency and
a cold sample reads faster than a warm one (seen on the H100)."""

from xbench_pytorch import model as m


class _Buffer:
    def __init__(self, log):
        self.log = log

    def zero_(self):
        self.log.append("memset")


def test_flush_waits_for_the_memset_before_the_sample(monkeypatch):
    log = []
    monkeypatch.setattr(m, "_flush_buffer", _Buffer(log))
    monkeypatch.setattr(m, "_synchronize", lambda *a, **k: log.append("synchronize"))
    m.CudaEventTimer().flush()
    assert log == ["memset", "synchronize"]


def test_event_timer_waits_for_every_stream_with_its_own_references(monkeypatch):
    # A call may leave work on another stream: the wait after the end event
    # is the device-wide synchronize (every stream), and the timer uses the
    # references captured at import, so a candidate replacing
    # torch.cuda.Event.record or torch.cuda.synchronize changes nothing here.
    log = []

    class _Ev:
        def __init__(self, enable_timing):
            assert enable_timing

    monkeypatch.setattr(m, "_Event", _Ev)
    monkeypatch.setattr(m, "_record", lambda e: log.append("record"))
    monkeypatch.setattr(m, "_elapsed_time", lambda a, b: log.append("elapsed") or 1.5)
    monkeypatch.setattr(m, "_synchronize", lambda *a, **k: log.append("synchronize"))
    monkeypatch.setattr(m.torch.cuda, "synchronize", lambda *a, **k: log.append("patched"))
    monkeypatch.setattr(m.torch.cuda.Event, "record", lambda *a, **k: log.append("patched"))
    assert m.CudaEventTimer().time(lambda: log.append("call")) == 1.5
    assert log == ["record", "call", "record", "synchronize", "elapsed"]


class _FillBuffer:
    def __init__(self, log):
        self.log = log

    def fill_(self, v):
        self.log.append(f"fill {v}")


def test_kernelbench_timer_does_not_wait_for_its_flush(monkeypatch):
    # KernelBench's method: synchronize, then the 256 MiB write, then at once
    # the start event: the write is not waited for (it hides the call's
    # launch latency, as in KernelBench's published files).
    log = []
    monkeypatch.setattr(m, "_kernelbench_buffer", _FillBuffer(log))
    monkeypatch.setattr(m, "_synchronize", lambda *a, **k: log.append("synchronize"))
    monkeypatch.setattr(m, "_Event", lambda enable_timing: object())
    monkeypatch.setattr(m, "_record", lambda e: log.append("record"))
    monkeypatch.setattr(m, "_elapsed_time", lambda a, b: 2.0)
    t = m.KernelBenchTimer()
    t.flush()
    assert t.time(lambda: log.append("call")) == 2.0
    assert log == ["synchronize", "fill 42", "record", "call", "record", "synchronize"]


def test_method_chooses_the_gpu_timer_and_the_device_clock_keeps_kernelbench(monkeypatch):
    from xbench_py import devclock
    from xbench_py import types as xt

    import pytest

    monkeypatch.delenv("XBENCH_METHOD", raising=False)
    assert type(m.gpu_timer()) is m.CudaEventTimer
    monkeypatch.setenv("XBENCH_METHOD", "kernelbench")
    kb = m.gpu_timer()
    assert type(kb) is m.KernelBenchTimer
    assert devclock.device_timer(kb, "cuda") is kb and kb.description.startswith("kernelbench-events: KernelBench's cuda_event method")
    monkeypatch.setenv("XBENCH_METHOD", "fast")
    with pytest.raises(xt.Unsupported, match="XBENCH_METHOD='fast' is not allowed"):
        m.gpu_timer()
