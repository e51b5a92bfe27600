#!/usr/bin/env python3
"""triton backend entry point: everything but the kernel lives in
plugins/_python/xbench_py/types.py (and the dense model in plugins/pytorch);
run with --help for the flags."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGINS = os.path.dirname(HERE)
# Our own folder first: triton_*.py, then the pytorch backend it builds on.
sys.path[:0] = [os.path.join(PLUGINS, "_python"), HERE, os.path.join(PLUGINS, "pytorch")]

from xbench_py import cli  # noqa: E402


def _device_flag(argv):
    for i, a in enumerate(argv):
        if a == "--device" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--device="):
            return a.split("=", 1)[1]
    return "auto"


def load():
    # TRITON_INTERPRET decides, when the kernels are defined, whether they are
    # compiled or interpreted: settle it before triton_model is imported.
    import torch

    if _device_flag(sys.argv[1:]) == "cpu" or not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"
    import triton_backend

    return triton_backend.Backend()


if __name__ == "__main__":
    cli.main(HERE, load)
