"""The command line of every Python backend (reach it as xbench_contract.main).

Flags mirror result.Config; bad input exits 2 with one line that names the
flag, the value and what is allowed; --serve hands over to the serve loop.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys

import xbench_contract as xc
from xbench_runner import protocol_stdout, run, serve

class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, no usage dump
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(2)


def _int_at_least(least: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < least:
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed; it must be an integer >= {least}")
        return value
    return parse


def _parser(prog: str) -> _Parser:
    p = _Parser(prog=prog, description="Time one TTT configuration (see docs/protocol.md).")
    a = p.add_argument
    a("--model-size", choices=[*xc.SIZES, *xc.SIZE_ALIASES], help="required unless --serve")
    a("--ttt-type", choices=xc.TTT_TYPES, help="required unless --serve")
    a("--backward", action="store_true", help="time forward + gradient of the loss")
    a("--inner-only", action="store_true", help="time one layer's inner loop alone")
    a("--batch", type=_int_at_least(1), default=1)
    a("--seq-len", type=_int_at_least(1), default=2048)
    a("--mini-batch", type=_int_at_least(1), default=16)
    a("--dtype", choices=xc.DTYPES, default="float32")
    a("--backbone", choices=xc.BACKBONES, default="transformer")
    a("--warmup", type=_int_at_least(0), default=3)
    a("--repeats", type=_int_at_least(1), default=10)
    a("--device", choices=xc.DEVICES, default="auto")
    a("--variant", default="")
    a("--seed", type=_int_at_least(0), default=0)
    a("--json", action="store_true", help="print the result record as one JSON line")
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


def _human(rec: dict) -> str:
    c, d = rec["config"], rec["device"]
    what = (f"{rec['backend']} {c['model_size']} {c['ttt_type']} "
            f"{'inner_only' if c['inner_only'] else 'backward' if c['backward'] else 'forward'} "
            f"{c['dtype']} B={c['batch']} L={c['seq_len']} K={c['mini_batch']} on {d['kind']}")
    if rec["status"] != "ok":
        return f"{what}: {rec['status']}: {rec.get('message', '')}"
    s = rec["stats"]
    line = (f"{what} ({d['name']}): median {s['median_ms']:.3f} ms (p10 {s['p10_ms']:.3f}, p90 {s['p90_ms']:.3f}, "
            f"n={s['n']}), {rec['tokens_per_s']:.0f} tokens/s, compile {rec['compile_ms']:.1f} ms")
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
    for flag in ("model_size", "ttt_type"):
        if getattr(args, flag) is None:
            choices = [*xc.SIZES, *xc.SIZE_ALIASES] if flag == "model_size" else xc.TTT_TYPES
            _fail(prog, f"--{flag.replace('_', '-')} is required; choose from {', '.join(choices)}")
    cfg = xc.Config(model_size=args.model_size, ttt_type=args.ttt_type, backward=args.backward,
                    inner_only=args.inner_only, batch=args.batch, seq_len=args.seq_len,
                    mini_batch=args.mini_batch, dtype=args.dtype, backbone=args.backbone,
                    warmup=args.warmup, repeats=args.repeats)
    try:
        cfg.validate(flags=True)
    except xc.ConfigError as e:
        _fail(prog, str(e))
    # With --json, stdout holds the record alone (stray prints go to stderr).
    out = protocol_stdout() if args.json else sys.stdout
    fw = _load(prog, manifest, load)
    fw.name, fw.description = manifest["name"], manifest.get("description", "")
    rec = run(fw, cfg, args.variant, args.device, args.seed)
    out.write((json.dumps(rec, allow_nan=False) if args.json else _human(rec)) + "\n")
    out.flush()
    sys.exit(0 if rec["status"] == "ok" else 1)
