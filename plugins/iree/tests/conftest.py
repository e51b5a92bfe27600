import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(os.path.dirname(PLUGIN), "_python"), PLUGIN]
