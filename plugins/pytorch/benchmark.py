#!/usr/bin/env python3
"""pytorch backend entry point: everything but the model lives in
plugins/_python/xbench_py/types.py; run with --help for the flags."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), "_python"), HERE]

from xbench_py import cli  # noqa: E402


def load():
    # Imported only after the contract has checked that torch is installed.
    import backend

    return backend.Backend()


if __name__ == "__main__":
    cli.main(HERE, load)
