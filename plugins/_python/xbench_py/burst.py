"""xbench_py.burst: the two ops of the harness's outside clock check
(docs/protocol.md, "burst"). burst_prepare prepares one configuration and
makes its first call; burst then calls that prepared step a given number of
times back to back and times nothing: the harness's own clock, in a Go
process no candidate code runs in, measures the burst request, so a backend
whose Python clock was patched cannot shorten it.

The prepared step lives in this module between the two requests: the
harness sends them to a process of its own for the cell (process_per_cell),
so nothing else is prepared in between. It builds on xbench_py.types and
runner (the same capability checks and prepare a run uses).
"""

from __future__ import annotations

from xbench_py import runner
from xbench_py import types as xc

# The most calls one burst request may ask for; the harness asks for at
# most 1000 (harness/bench/outside.go), so more is a broken request.
MAX_CALLS = 100_000

_prepared: dict = {}  # "step": the prepared configuration's step, until the next burst_prepare


def prepare(fw: xc.Framework, cfg: xc.Config, variant: str, device: str, seed: int = 0) -> dict:
    """op burst_prepare: {"status": "ok"} once the step is prepared and
    called once (compiling and warming outside the burst), else the status
    and message a run would give (unsupported, failed, oom)."""
    _prepared.clear()
    fw.release()
    try:
        caps, who = runner._caps_for(fw, cfg, variant, device)
        dev = runner._resolve(fw, caps, who, device)
        if dev.kind != "cpu":
            # On a GPU a call's wall time is legitimately far above its
            # device time (launch-bound calls): the check would be wrong.
            raise xc.Unsupported(f"burst runs on the CPU only; {who} resolved {device} to {dev.kind}")
        prepared = runner._method(fw, "prepare", cfg.workload)(runner.view(cfg), variant, dev, seed)
        prepared.step()
        _prepared["step"] = prepared.step
    except xc.Unsupported as e:
        return {"status": "unsupported", "message": str(e)}
    except Exception as e:  # noqa: BLE001 - a failure is the reply, as a run's
        status, message = runner._failure(e)
        return {"status": status, "message": message}
    return {"status": "ok"}


def run(req) -> dict:
    """op burst: call the prepared step req["calls"] times, timing nothing.
    ConfigError for a request without a prepared step or a bad count."""
    if not isinstance(req, dict):
        raise xc.ConfigError("op burst needs a 'request' object with 'calls'")
    calls = req.get("calls")
    if isinstance(calls, bool) or not isinstance(calls, int) or not 1 <= calls <= MAX_CALLS:
        raise xc.ConfigError(f"op burst: calls {calls!r} must be an integer from 1 to {MAX_CALLS}")
    step = _prepared.get("step")
    if step is None:
        raise xc.ConfigError("op burst needs a configuration prepared by burst_prepare first")
    for _ in range(calls):
        step()
    return {"status": "ok", "calls": calls}
