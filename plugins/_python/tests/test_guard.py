"""xbench_py.guard: a protected attribute replaced, wrapped or deleted is
named, check() refuses and restores it, and threads started since a
snapshot are found."""

import threading
import time
import types

import pytest

from xbench_py import guard
from xbench_py import types as xt


def _owner():
    o = types.SimpleNamespace(f=len, g=abs)
    guard.protect("test.f", o, "f")
    guard.protect("test.g", o, "g", kind="gate")
    return o


@pytest.mark.parametrize("how,want", [
    ("replace", ["test.f"]),
    ("delete", ["test.f"]),
    ("wrap", ["test.f", "test.g"]),
    ("none", []),
])
def test_tampered_names_what_changed_and_restore_puts_it_back(how, want):
    o = _owner()
    if how == "replace":
        o.f = max
    elif how == "delete":
        del o.f
    elif how == "wrap":
        f, g = o.f, o.g
        o.f, o.g = (lambda x: f(x)), (lambda x: g(x))
    assert guard.tampered() == want
    assert guard.restore() == []
    assert o.f is len and o.g is abs and guard.tampered() == []


def test_check_refuses_naming_the_class_and_restores():
    o = _owner()
    o.g = max
    with pytest.raises(guard.Tampered, match=r"^patched gate: test\.g replaced during x \(.*\); restored$"):
        guard.check("during x")
    assert o.g is abs
    o.f, o.g = max, min  # a clock among them: the class is the clock's
    with pytest.raises(guard.Tampered, match=r"^patched clock: test\.f, test\.g replaced"):
        guard.check("during x")
    guard.check("during x")  # nothing left: no refusal


def test_the_harness_clock_is_captured_and_time_is_protected(monkeypatch):
    real = time.perf_counter
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)
    assert "time.perf_counter" in guard.tampered()
    # the timers read the captured reference, not the replaced one
    assert xt.Timer().time(lambda: sum(range(1000))) > 0
    assert guard.perf_counter is real


def test_threads_since_names_new_live_threads():
    before = guard.threads()
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, name="probe-thread")
    t.start()
    try:
        assert guard.threads_since(before) == ["probe-thread"]
    finally:
        stop.set()
        t.join()
    assert guard.threads_since(before) == []


def test_threads_since_leaves_out_native_threads_python_saw():
    # A native thread that runs Python and asks for its thread object (as a
    # CUPTI buffer callback may) becomes a _DummyThread that stays "alive":
    # it is not a thread the candidate started with threading.
    import _thread

    before = guard.threads()
    done = threading.Event()
    seen = []

    def native():
        seen.append(threading.current_thread())
        done.set()
    _thread.start_new_thread(native, ())
    done.wait()
    assert isinstance(seen[0], threading._DummyThread)
    assert guard.threads_since(before) == []
