#!/usr/bin/env python3
"""iree backend entry point: the backend is the package xbench_iree
(plugins/_python/xbench_iree), the protocol xbench_py; run with --help for the
flags."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# plugins/_python holds the contract (xbench_py) and every backend package
# (xbench_<name>): one entry on the path, no backend folder on it.
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "_python"))

from xbench_py import cli  # noqa: E402


def load():
    # Imported only after the contract has checked that iree.runtime is
    # installed; the compiler (iree.compiler) is optional: without it the
    # backend runs modules from --compile-cache only (xbench_iree/cache.py).
    from xbench_iree.backend import Backend

    return Backend()


if __name__ == "__main__":
    cli.main(HERE, load)
