#!/usr/bin/env python3
"""flash-semicrf backend entry point: the package is flash-semicrf's, the
protocol is plugins/_python/xbench_py/types.py, devices, timers and the scan's
phases are the pytorch backend's; run with --help for the flags."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGINS = os.path.dirname(HERE)
# Our folder first (fsc_backend.py), then the pytorch backend it builds on.
sys.path[:0] = [os.path.join(PLUGINS, "_python"), HERE, os.path.join(PLUGINS, "pytorch")]

from xbench_py import cli  # noqa: E402


def load():
    import fsc_backend

    return fsc_backend.Backend()


if __name__ == "__main__":
    cli.main(HERE, load)
