"""xbench_py: the shared Python side of the xbench backend protocol
(docs/protocol.md). Its modules import one way, facts first:

  facts   what the Go harness declares (workload params, defaults, enums,
          TTT sizes and constants, protocol version, devices), read from
          facts.json, which `go generate ./harness/facts` writes: nothing
          of it is kept by hand in Python.
"""
