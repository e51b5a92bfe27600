"""The contract's command line, with the real pytorch entry point for input
checks (they fail before torch is imported) and a dummy framework for runs."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PYDIR = os.path.join(ROOT, "plugins", "_python")
ENTRY = os.path.join(ROOT, "plugins", "pytorch", "benchmark.py")
SCHEMA = os.path.join(ROOT, "schema", "result.schema.json")


def run(argv, entry=ENTRY, **kw):
    return subprocess.run([sys.executable, entry, *argv], capture_output=True, text=True, timeout=60, **kw)


@pytest.mark.parametrize("argv,flag", [
    (["--model-size", "tiny", "--ttt-type", "linear", "--seq-len", "100"], "--seq-len"),
    (["--model-size", "tiny", "--ttt-type", "linear", "--repeats", "0"], "--repeats"),
    (["--model-size", "huge", "--ttt-type", "linear"], "--model-size"),
    (["--model-size", "tiny", "--ttt-type", "linear", "--dtype", "float8"], "--dtype"),
    (["--model-size", "tiny", "--ttt-type", "linear", "--batch", "x"], "--batch"),
    (["--model-size", "tiny", "--ttt-type", "conv"], "--ttt-type"),
    (["--model-size", "tiny"], "--ttt-type"),
    (["--model-size", "tiny", "--ttt-type", "mlp", "--device", "tpu"], "--device"),
    (["--model-size", "tiny", "--ttt-type", "mlp", "--bogus"], "--bogus"),
])
def test_bad_input_exits_2(argv, flag):
    r = run(argv)
    assert r.returncode == 2, r.stderr
    err = r.stderr.strip()
    assert "\n" not in err and "Traceback" not in err and flag in err, err
    assert r.stdout == ""


def test_seq_len_message_says_what_is_allowed():
    err = run(["--model-size", "tiny", "--ttt-type", "linear", "--seq-len", "100", "--mini-batch", "16"]).stderr
    assert "100" in err and "multiple of 16" in err


DUMMY = textwrap.dedent('''
    import os, sys, time
    sys.path.insert(0, {pydir!r})
    import xbench_contract as xc

    class Dummy(xc.Framework):
        framework = "none"
        capabilities = xc.Capabilities(devices=("cpu",))
        variants = (xc.Variant("fast", "", xc.Capabilities(dtypes=("float32",))),)

        def prepare(self, cfg, variant, device, seed):
            print("stray print from a framework")  # must not reach the protocol stream
            os.write(1, b"stray native write\\n")
            return xc.Prepared(step=lambda: time.sleep(0.001), num_params=7)

    if __name__ == "__main__":
        xc.main({plugdir!r}, Dummy)
''')


@pytest.fixture
def dummy(tmp_path):
    def make(requires=()):
        (tmp_path / "plugin.json").write_text(json.dumps(
            {"name": "dummy", "runtime": "python", "entry": "benchmark.py", "requires": list(requires)}))
        entry = tmp_path / "benchmark.py"
        entry.write_text(DUMMY.format(pydir=PYDIR, plugdir=str(tmp_path)))
        return str(entry)
    return make


def test_missing_package_exits_2(dummy):
    r = run(["--model-size", "tiny", "--ttt-type", "linear"], entry=dummy(["xbench_no_such_pkg"]))
    assert r.returncode == 2
    assert r.stderr.strip().endswith(
        f"backend dummy needs the Python package 'xbench_no_such_pkg', which is not installed for "
        f"{sys.executable}; run ./setup.sh (it installs it into .venv)")


def test_dummy_run_and_unsupported_match_schema(dummy):
    jsonschema = pytest.importorskip("jsonschema")
    with open(SCHEMA) as f:
        schema = json.load(f)
    entry = dummy()
    ok = run(["--model-size", "1.3b", "--ttt-type", "linear", "--seq-len", "32", "--json", "--repeats", "6"], entry=entry)
    assert ok.returncode == 0, ok.stderr
    rec = json.loads(ok.stdout)
    jsonschema.validate(rec, schema)
    assert rec["config"]["model_size"] == "1b" and rec["stats"]["n"] == 6 and len(rec["samples_ms"]) == 6
    assert rec["stats"]["ci_method"] == "order-statistic binomial" and rec["num_params"] == 7
    for argv, word in ((["--variant", "slow"], "slow"), (["--variant", "fast", "--dtype", "float64"], "float64"),
                       (["--backbone", "mamba"], "mamba"), (["--device", "cuda"], "cuda")):
        r = run(["--model-size", "tiny", "--ttt-type", "mlp", "--json", *argv], entry=entry)
        assert r.returncode == 1
        rec = json.loads(r.stdout)
        jsonschema.validate(rec, schema)
        assert rec["status"] == "unsupported" and word in rec["message"] and "supported" in rec["message"] \
            or "variants" in rec["message"], rec["message"]
    human = run(["--model-size", "tiny", "--ttt-type", "mlp", "--repeats", "2", "--warmup", "0"], entry=entry)
    last = human.stdout.splitlines()[-1]  # without --json, stray prints stay on stdout
    assert human.returncode == 0 and last.startswith("dummy tiny mlp forward float32") and "median" in last


def test_serve_keeps_stdout_clean(dummy):
    entry = dummy()
    reqs = [
        {"id": 1, "op": "run", "request": {"workload": "ttt", "device": "cpu", "config": {
            "model_size": "tiny", "ttt_type": "linear", "seq_len": 16, "warmup": 0, "repeats": 1}}},
        {"id": 2, "op": "info"},
        {"id": 3, "op": "shutdown"},
        {"id": 4, "op": "info"},  # never answered: the session has ended
    ]
    r = subprocess.run([sys.executable, entry, "--serve"], input="".join(json.dumps(q) + "\n" for q in reqs),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    replies = [json.loads(line) for line in r.stdout.splitlines()]
    assert [x["id"] for x in replies] == [1, 2]
    assert replies[0]["result"]["status"] == "ok" and replies[1]["info"]["name"] == "dummy"
    assert "stray print" in r.stderr and "stray native write" in r.stderr
