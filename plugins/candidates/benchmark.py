#!/usr/bin/env python3
"""candidates backend entry point: the contract in plugins/_python, the
problem code in plugins/pytorch; run with --help for the flags."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGINS = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(PLUGINS, "_python"), HERE, os.path.join(PLUGINS, "pytorch")]

from xbench_py import cli  # noqa: E402


def load():
    import candidates_backend

    return candidates_backend.Backend()


if __name__ == "__main__":
    cli.main(HERE, load)
