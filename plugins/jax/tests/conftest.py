import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN = os.path.dirname(HERE)
PLUGINS = os.path.dirname(PLUGIN)
# plugins/_python: the contract xbench_py and every backend package (xbench_<name>)
sys.path.insert(0, os.path.join(PLUGINS, "_python"))
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
