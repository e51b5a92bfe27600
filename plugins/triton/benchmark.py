#!/usr/bin/env python3
"""triton backend entry point: the backend is the package xbench_triton
(plugins/_python/xbench_triton; the dense layers are xbench_pytorch's), the
protocol xbench_py; run with --help for the flags."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# plugins/_python holds the contract (xbench_py) and every backend package
# (xbench_<name>): one entry on the path, no backend folder on it.
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "_python"))

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
    # compiled or interpreted: settle it before xbench_triton.model is imported.
    import torch

    if _device_flag(sys.argv[1:]) == "cpu" or not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"
    from xbench_triton.backend import Backend

    return Backend()


if __name__ == "__main__":
    cli.main(HERE, load)
