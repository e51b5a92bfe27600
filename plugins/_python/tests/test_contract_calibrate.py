"""The optional "calibrate" op of the serve loop: a framework with
calibrate() answers a calibration; one without it answers an error that says
it cannot calibrate (the harness maps that to one clear message)."""
import json
import os
import subprocess
import sys
import textwrap

# plugins/_python; computed here, not imported from conftest, because pytest
# loads several test folders' conftest.py files under one module name.
PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FRAMEWORK = textwrap.dedent('''
    import sys
    sys.path.insert(0, {pydir!r})
    from xbench_py import types as xt
    from xbench_py import cli

    class Plain(xt.Framework):
        framework = "none"

    class Measuring(Plain):
        def calibrate(self, device, dtypes):
            return {{"matmul_tflops": {{d: 1.5 for d in dtypes if d != "float64"}}, "copy_gbps": 12, "method": "m"}}

    if __name__ == "__main__":
        cli.main({plugdir!r}, {cls})
''')


def serve(tmp_path, cls, reqs):
    (tmp_path / "plugin.json").write_text(json.dumps({"name": "cal", "runtime": "python", "entry": "b.py", "requires": []}))
    entry = tmp_path / "b.py"
    entry.write_text(FRAMEWORK.format(pydir=PYDIR, plugdir=str(tmp_path), cls=cls))
    r = subprocess.run([sys.executable, str(entry), "--serve"], input="".join(json.dumps(q) + "\n" for q in reqs),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def test_calibrate_answers(tmp_path):
    rep = serve(tmp_path, "Measuring", [{"id": 1, "op": "calibrate", "request": {"device": "cpu", "dtypes": ["float32", "float64"]}}])
    cal = rep[0]["calibration"]
    assert cal["device"]["kind"] == "cpu" and cal["matmul_tflops"] == {"float32": 1.5}
    assert cal["copy_gbps"] == 12.0 and cal["method"] == "m"


def test_calibrate_refusals(tmp_path):
    rep = serve(tmp_path, "Plain", [
        {"id": 1, "op": "calibrate", "request": {"device": "cpu", "dtypes": ["float32"]}},
        {"id": 2, "op": "calibrate", "request": {"device": "cuda", "dtypes": ["float32"]}},
        {"id": 3, "op": "calibrate", "request": {"device": "cpu", "dtypes": ["int8"]}},
        {"id": 4, "op": "info"},
    ])
    assert rep[0] == {"id": 1, "error": "backend cal cannot calibrate"}
    assert "cuda" in rep[1]["error"] and "int8" in rep[2]["error"]
    assert rep[3]["info"]["name"] == "cal"  # the session survives refusals
