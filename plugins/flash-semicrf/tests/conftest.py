import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN = os.path.dirname(HERE)
PLUGINS = os.path.dirname(PLUGIN)
sys.path[:0] = [os.path.join(PLUGINS, "_python"), PLUGIN, os.path.join(PLUGINS, "pytorch")]
