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
