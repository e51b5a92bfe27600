"""The adversarial suite: one candidate per cheat class (cheats/, each file
says what it tries), run on the CPU against the shipped level1
1_square_matmul problem. Each is refused, with a message that starts with
its class; and an honest candidate run after all of them in the same
backend process is timed as it is alone: same record, nothing the harness
times or checks with left replaced, no thread of theirs left."""

import os
import shutil
import threading
import time

import pytest

from xbench_candidates import backend as cb
from xbench_py import guard
from xbench_py import runner as xr
from xbench_py import workloads as xw

HERE = os.path.dirname(os.path.abspath(__file__))
CHEATS = os.path.join(HERE, "cheats")
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", "problems"))
HONEST = os.path.join(ROOT, "candidates", "right", "level1", "1_square_matmul.py")

# cheat file -> the classes its refusal may start with (two where what the
# gate sees first depends on the allocator: garbage or NaN)
REFUSED = {
    "wrong_dtype.py": ("wrong dtype: output 0 is torch.float16, the Model's is torch.float32",),
    "patched_perf_counter.py": ("patched clock: time.perf_counter replaced during the first call",),
    "patched_event.py": ("patched clock: torch.cuda.synchronize, torch.cuda.Event.record, "
                         "torch.cuda.Event.elapsed_time replaced while the candidate file was imported",),
    "background_thread.py": ("background thread: cheat-worker started by the candidate still alive after a gate "
                             "call",),
    "uninitialised_output.py": ("incorrect: max abs err", "non-finite output:"),
    "result_cache.py": ("result reuse: output 0 of a warmup call is the storage of an earlier call's output",),
    # the gate's later seeds may get inputs at the storage of the first's (the
    # allocator's choice), version 0 again: then its cache answers them wrong
    "versioned_cache.py": ("result reuse: output 0 of a warmup call is the storage of an earlier call's output",
                           "incorrect: max abs err"),
    "patched_reference.py": ("patched gate: torch.matmul replaced while the candidate file was imported",),
    "right_then_wrong.py": ("wrong after timing: incorrect: max abs err",),
    "swallowed_error.py": ("incorrect: max abs err",),
    "nan_output.py": ("non-finite output: 256 NaN or infinite values in output 0",),
    "lazy_subclass.py": ("tensor subclass: output 0 is a ",),
    "wrong_device.py": ("wrong device: output 0 is on meta, the Model's on cpu",),
    "patched_gate.py": ("patched gate: torch.Tensor.abs replaced while the candidate file was imported",),
    "hidden_thread.py": ("patched gate: threading.enumerate replaced while the candidate file was imported",),
}


def test_every_cheat_file_has_an_expected_refusal():
    assert sorted(f for f in os.listdir(CHEATS) if f.endswith(".py")) == sorted(REFUSED)


def _run(fw, monkeypatch, tmp_path, source: str) -> dict:
    d = tmp_path / "cand" / "level1"
    d.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, d / "1_square_matmul.py")
    monkeypatch.setenv("XBENCH_CANDIDATES", str(tmp_path / "cand"))
    return xr.run(fw, xw.Problem(problems=ROOT, level=1, problem=1, warmup=1, repeats=3), "", "cpu")


def _join_leftover_threads():
    # A refused cheat's thread finishes its own work; the next cell must not
    # share the CPU with it (the harness restarts the process after a failed
    # cell anyway).
    for t in threading.enumerate():
        if t is not threading.current_thread() and t.name in ("cheat-worker", "hidden-worker"):
            t.join()


@pytest.fixture
def fw():
    b = cb.Backend()
    b.name = "candidates"
    return b


@pytest.mark.parametrize("cheat", sorted(REFUSED))
def test_cheat_is_refused_naming_its_class(fw, monkeypatch, tmp_path, cheat):
    r = _run(fw, monkeypatch, tmp_path, os.path.join(CHEATS, cheat))
    _join_leftover_threads()
    assert r["status"] == "failed", (cheat, r.get("samples_ms"), r.get("warnings"))
    assert r["message"].startswith(REFUSED[cheat]), r["message"]
    assert r["samples_ms"] == []
    assert guard.tampered() == [], "a refusal restores what the cheat replaced"


def test_swallowed_error_is_named_by_the_static_review(fw, monkeypatch, tmp_path):
    r = _run(fw, monkeypatch, tmp_path, os.path.join(CHEATS, "swallowed_error.py"))
    assert "static review: try/except that swallows errors (line 11: except Exception)" in r["message"]


def _same_but_timing(r: dict) -> dict:
    out = {k: v for k, v in r.items() if k not in ("samples_ms", "compile_ms", "timestamp", "warnings")}
    # the candidate's path is in the gate's note; the rest of it must match
    out["warnings"] = [w.rsplit("; candidate ", 1)[0] for w in r.get("warnings", [])]
    return out


def test_honest_candidate_after_every_cheat_is_timed_as_if_alone(monkeypatch, tmp_path):
    fw = cb.Backend()
    fw.name = "candidates"
    alone = _run(fw, monkeypatch, tmp_path / "alone", HONEST)
    assert alone["status"] == "ok", alone.get("message")
    for cheat in sorted(REFUSED):
        r = _run(fw, monkeypatch, tmp_path / cheat.removesuffix(".py"), os.path.join(CHEATS, cheat))
        assert r["status"] == "failed", cheat
        _join_leftover_threads()
    after = _run(fw, monkeypatch, tmp_path / "after", HONEST)
    assert after["status"] == "ok", after.get("message")
    assert len(after["samples_ms"]) == 3 and all(s > 0 for s in after["samples_ms"])
    assert _same_but_timing(after) == _same_but_timing(alone)
    # the clocks are the originals the harness captured, and nothing else is replaced
    assert time.perf_counter is guard.perf_counter and guard.tampered() == []


def test_tampering_left_by_an_earlier_request_is_restored_before_the_next(fw, monkeypatch, tmp_path):
    # An export or compile request runs code without the per-call checks;
    # whatever it replaced is put back before the next run's first call.
    real = time.perf_counter
    time.perf_counter = lambda: real() / 1000.0
    try:
        r = _run(fw, monkeypatch, tmp_path, HONEST)
    finally:
        restored = time.perf_counter is real
        time.perf_counter = real
    assert restored and r["status"] == "ok", r.get("message")


JOINED_THREAD = '''import threading

import torch


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        out = {}
        t = threading.Thread(target=lambda: out.update(c=a @ b))
        t.start()
        t.join()  # the work is done before forward returns: inside the sample
        return out["c"]
'''


def test_thread_joined_inside_the_call_is_timed_and_reviewed(fw, monkeypatch, tmp_path):
    # The static review refuses nothing: a thread joined before forward
    # returns is timed, and the result's warnings name the thread for a reader.
    src = tmp_path / "joined.py"
    src.write_text(JOINED_THREAD)
    r = _run(fw, monkeypatch, tmp_path, str(src))
    assert r["status"] == "ok", r.get("message")
    assert "static review: threads (line 1: import threading; line 9: threading.Thread)" in r["warnings"]
