"""The command line of every Python backend: benchmark.py calls
xbench_py.cli.main(HERE, load).

A debugging aid: it times one configuration of one workload with light type
checks only (integers are integers, enum flags take known spellings). The
harness (`xbench run`) is the validator: ranges, defaults and cross-checks
such as seq_len % mini_batch are its job, so a config it would refuse may
reach the framework here and fail there. --serve hands over to the serve loop.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys

from xbench_py import facts
from xbench_py import types as xc
from xbench_py.runner import run
from xbench_py.serve import protocol_stdout, serve
from xbench_py.spec import SIZE_ALIASES, SIZES
from xbench_py.workloads import TTT, Gemm


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, no usage dump
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(2)


def _int_at_least(least: int):
    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            value = None
        if value is None or value < least:
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed; it must be an integer >= {least}")
        return value
    return parse


def _parser(prog: str) -> _Parser:
    p = _Parser(prog=prog, description=(
        "Time one configuration of one workload (see docs/protocol.md). A debugging aid: it checks "
        "types only; `xbench run` validates ranges and defaults and is the way to benchmark."))
    a = p.add_argument
    # defaults are the harness's declarations (xbench_py.facts)
    ttt, gemm = facts.defaults("ttt"), facts.defaults("gemm")
    a("--workload", choices=facts.NAMES, default="ttt")
    a("--phase", choices=xc.PHASES, help="default: forward (or as --backward/--inner-only say)")
    g = p.add_argument_group("ttt")
    g.add_argument("--model-size", choices=[*SIZES, *SIZE_ALIASES], help="required for ttt")
    g.add_argument("--ttt-type", choices=xc.TTT_TYPES, help="required for ttt")
    g.add_argument("--backward", action="store_true", help="phase backward: forward + gradient of the loss")
    g.add_argument("--inner-only", action="store_true", help="phase inner_only: one layer's inner loop alone")
    g.add_argument("--seq-len", type=_int_at_least(1), default=ttt["seq_len"])
    g.add_argument("--mini-batch", type=_int_at_least(1), default=ttt["mini_batch"])
    g.add_argument("--backbone", choices=xc.BACKBONES, default=ttt["backbone"])
    g = p.add_argument_group("gemm: C[batch, m, n] = op(A) @ op(B)")
    g.add_argument("--m", type=_int_at_least(1), default=gemm["m"])
    g.add_argument("--n", type=_int_at_least(1), default=gemm["n"])
    g.add_argument("--k", type=_int_at_least(1), default=gemm["k"])
    g.add_argument("--layout", choices=xc.GEMM_LAYOUTS, default=gemm["layout"], help="A's letter, then B's; t = stored transposed")
    a("--batch", type=_int_at_least(1), default=ttt["batch"], help="default: ttt's and gemm's (both 1)")
    a("--param", action="append", default=[], metavar="NAME=VALUE",
      help="every other workload (attention, scan, a new one): one of its parameters in the harness's spelling "
           "(`xbench workloads`), repeatable; the others take their defaults")
    a("--dtype", choices=xc.DTYPES, default=ttt["dtype"])
    a("--warmup", type=_int_at_least(0), default=3)
    a("--repeats", type=_int_at_least(1), default=10)
    a("--device", choices=xc.DEVICES, default="auto")
    a("--variant", default="")
    a("--seed", type=_int_at_least(0), default=0)
    a("--json", action="store_true", help="print the result record as one JSON line (samples only: the "
                                          "harness computes statistics and throughput)")
    a("--serve", action="store_true", help="answer JSON-lines requests on stdin (the harness's mode)")
    return p


def _fail(prog: str, message: str) -> None:
    sys.stderr.write(f"{prog}: error: {message}\n")
    sys.exit(2)


def _load(prog: str, manifest: dict, load):
    for mod in manifest.get("requires", []):
        if importlib.util.find_spec(mod) is None:
            _fail(prog, f"backend {manifest['name']} needs the Python package '{mod}', which is not installed "
                        f"for {sys.executable}; run ./setup.sh (it installs it into .venv)")
    try:
        return load()
    except ImportError as e:
        _fail(prog, f"backend {manifest['name']} could not import {e.name or 'a module'} ({e}) with "
                    f"{sys.executable}; run ./setup.sh (it installs it into .venv)")


def _generic_config(prog: str, args) -> xc.Config:
    """A workload without dedicated flags: its declared defaults (facts),
    overridden by --param NAME=VALUE, checked for known names only."""
    declared = facts.params(args.workload)
    params = {n: p["default"] for n, p in declared.items()}
    for item in args.param:
        name, eq, value = item.partition("=")
        if not eq or name not in declared:
            _fail(prog, f"--param {item!r}: want NAME=VALUE with NAME one of {', '.join(declared)} "
                        f"(workload {args.workload})")
        params[name] = value
    return xc.Config(workload=args.workload, phase=args.phase or facts.phases(args.workload)[0], params=params,
                     warmup=args.warmup, repeats=args.repeats)


def _config(prog: str, args) -> xc.Config:
    if args.param and args.workload in ("ttt", "gemm"):
        _fail(prog, f"--param is for workloads without their own flags; {args.workload} has its own (--help)")
    if args.workload not in ("ttt", "gemm"):
        return _generic_config(prog, args)
    if args.workload == "gemm":
        return Gemm(m=args.m, n=args.n, k=args.k, batch=args.batch, layout=args.layout, dtype=args.dtype,
                       phase=args.phase or "forward", warmup=args.warmup, repeats=args.repeats).config()
    for flag in ("model_size", "ttt_type"):
        if getattr(args, flag) is None:
            choices = [*SIZES, *SIZE_ALIASES] if flag == "model_size" else xc.TTT_TYPES
            _fail(prog, f"--{flag.replace('_', '-')} is required; choose from {', '.join(choices)}")
    phase = args.phase or ("inner_only" if args.inner_only else "backward" if args.backward else "forward")
    return TTT(model_size=SIZE_ALIASES.get(args.model_size, args.model_size), ttt_type=args.ttt_type,
                  batch=args.batch, seq_len=args.seq_len, mini_batch=args.mini_batch, dtype=args.dtype,
                  backbone=args.backbone, phase=phase, warmup=args.warmup, repeats=args.repeats).config()


def _human(rec: dict) -> str:
    c, d = rec["config"], rec["device"]
    params = " ".join(f"{k}={v}" for k, v in c["params"].items())
    what = f"{rec['backend']} {c['workload']} {c['phase']} {params} on {d['kind']}"
    if rec["status"] != "ok":
        return f"{what}: {rec['status']}: {rec.get('message', '')}"
    s = rec["samples_ms"]
    line = (f"{what} ({d['name']}): samples_ms [{', '.join(f'{x:.3f}' for x in s)}], min {min(s):.3f} ms, "
            f"compile {rec['compile_ms']:.1f} ms")
    return line + "".join(f"; warning: {w}" for w in rec.get("warnings", []))


def main(plugin_dir: str, load, argv=None) -> None:
    """The backend's command line. load() returns the Framework instance; it
    is called only after plugin.json's `requires` are found importable.
    Exit status: 0 ok, 1 run not ok (unsupported/oom/failed), 2 bad input or
    missing package."""
    prog = os.path.basename(sys.argv[0]) or "benchmark.py"
    with open(os.path.join(plugin_dir, "plugin.json")) as f:
        manifest = json.load(f)
    args = _parser(prog).parse_args(argv)
    if args.serve:
        replies = protocol_stdout()
        fw = _load(prog, manifest, load)
        fw.name, fw.description = manifest["name"], manifest.get("description", "")
        sys.exit(serve(fw, replies))
    cfg = _config(prog, args)
    # With --json, stdout holds the record alone (stray prints go to stderr).
    out = protocol_stdout() if args.json else sys.stdout
    fw = _load(prog, manifest, load)
    fw.name, fw.description = manifest["name"], manifest.get("description", "")
    try:
        rec = run(fw, cfg, args.variant, args.device, args.seed)
    except xc.ConfigError as e:
        _fail(prog, str(e))
    out.write((json.dumps(rec, allow_nan=False) if args.json else _human(rec)) + "\n")
    out.flush()
    sys.exit(0 if rec["status"] == "ok" else 1)
