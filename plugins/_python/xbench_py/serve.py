"""xbench_py.serve: the JSON-lines serve loop of docs/protocol.md. Stdout
carries replies only (protocol_stdout); each request line is answered by
the runner (run, run_batch, compile, export, calibrate), the profiler (profile)
or the outside clock check (burst_prepare, burst).
It builds on xbench_py.types, runner, profile and burst; the CLI builds on it.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

from xbench_py import burst as xburst
from xbench_py import profile as xprofile
from xbench_py import types as xc
from xbench_py.runner import _parse_mode, _parse_request, calibrate, compile_ahead, export, run, run_batch


def _handle(fw: xc.Framework, op: str, msg: dict) -> dict:
    req = msg.get("request")
    if op == "info":
        # The protocol version rides on the first reply, so a harness of
        # another version names the mismatch (docs/protocol.md#changes).
        return {"protocol": xc.PROTOCOL_VERSION, "info": fw.info()}
    if op == "calibrate":
        return {"calibration": calibrate(fw, req)}
    if op == "profile":
        return {"profile": xprofile.profile(fw, *xprofile.parse(req))}
    if op == "run":
        return {"result": run(fw, *_parse_request(req, op), 0, _parse_mode(req))}
    if op == "compile":
        return {"compiled": compile_ahead(fw, *_parse_request(req, op), 0, _parse_mode(req))}
    if op == "run_batch":
        reqs = msg.get("requests")
        if not isinstance(reqs, list):
            raise xc.ConfigError("op run_batch needs a 'requests' list")
        parsed = []
        for i, r in enumerate(reqs):  # all checked before any runs: a broken batch runs nothing
            try:
                parsed.append((*_parse_request(r, "run_batch"), 0, _parse_mode(r)))
            except xc.ConfigError as e:
                raise xc.ConfigError(f"requests[{i}]: {e}") from e
        return {"results": run_batch(fw, parsed)}
    if op == "burst_prepare":
        return {"burst": xburst.prepare(fw, *_parse_request(req, op), 0)}
    if op == "burst":
        return {"burst": xburst.run(req)}
    if op == "export":
        cfg, variant, device = _parse_request(req, op)
        paths = []
        for k in ("weights_path", "inputs_path", "output_path"):
            if not isinstance(req.get(k, ""), str) or (k != "weights_path" and not req.get(k)):
                raise xc.ConfigError(f"export request needs {k} (a path{'; may be empty' if k == 'weights_path' else ''})")
            paths.append(req.get(k, ""))
        return {"export": export(fw, cfg, variant, device, *paths)}
    raise xc.ConfigError(f"unknown op {op!r}; ops: info, run, run_batch, compile, export, calibrate, profile, "
                         "burst_prepare, burst, shutdown")


def protocol_stdout():
    """Keep the real stdout for replies only and point fd 1 (and sys.stdout)
    at stderr, so prints from Python or native libraries (also while the
    framework is imported) cannot corrupt the protocol. Returns the reply stream."""
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return replies


def serve(fw: xc.Framework, replies=None) -> int:
    """Answer JSON-lines requests on stdin until "shutdown" or EOF."""
    if replies is None:
        replies = protocol_stdout()
    for line in sys.stdin:
        if not line.strip():
            continue
        rid = None
        try:
            msg = json.loads(line)
            if not isinstance(msg, dict):
                raise xc.ConfigError("a request must be a JSON object")
            rid = msg.get("id")
            if msg.get("op") == "shutdown":
                return 0
            reply = {"id": rid, **_handle(fw, msg.get("op"), msg)}
        except (xc.ConfigError, json.JSONDecodeError) as e:
            reply = {"id": rid, "error": str(e)}
        except Exception as e:  # noqa: BLE001 - one bad request must not end the session
            traceback.print_exc(file=sys.stderr)
            reply = {"id": rid, "error": xc.failure_message(e)}
        replies.write(json.dumps(reply, allow_nan=False) + "\n")
        replies.flush()
    return 0
