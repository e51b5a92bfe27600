"""xbench_py: the shared Python side of the xbench backend protocol
(docs/protocol.md). Import each name from the module that defines it; this
file re-exports nothing. The modules import one way (tests/test_package.py
checks the layers), bottom up:

  dtypes     the one table of xbench's dtype names: storage and result
             elements, TF32 / narrow math; each framework resolves the
             element names to its own dtypes (resolve)
  facts      what the Go harness declares (workload params, defaults, enums,
             TTT sizes and constants, protocol version, devices), read from
             facts.json, which `go generate ./harness/facts` writes
  guard      the harness's clock references, captured at import, and the
             check that code under test replaced nothing the timers and the
             candidates' gate use (types imports it, so it is first)
  modes      the host cache flush of --cold-cache and the flush sizes
  problems   finding and importing KernelBench-format problem files
  review     the static review of a candidate file (warnings, not refusals)
  scan_ref   the float64 NumPy reference of the semi-CRF scan (tests)
  tensors    safetensors I/O (numpy)
  spec       TTT's spec facts: sizes, constants, parameter specs, init, inputs
  types      the protocol's types: errors, Config, Mode, capabilities,
             Device, Prepared, Timer, the Framework base class, enums, the
             out-of-memory classifier
  workloads  typed views of each workload's params (TTT, Gemm, ...)
  devclock   the device clock (CUPTI kernel span) around a framework's timer
  runner     one request by the rules: run, run_batch, export, calibrate
  environment  the machine (cpu, nvidia, amd), its pinned requirements set,
             an interpreter's frameworks against what xbench supports
             (setup.sh, xbench doctor); runs on the standard library alone
  profile    the profile op
  serve      the JSON-lines serve loop
  cli        a backend's command line: benchmark.py calls cli.main(HERE, load)
"""
