"""Reads `go test -json` on stdin and prints what plain `go test` would
(each package's result line, and the whole output of every failed test or
package), and writes to the file named by --skipped one line per package
with a top-level test that skipped, or that holds a subtest that skipped:
"<package>\\t^(TestA|TestB)$", the package and the -run pattern of exactly
those tests.

test.sh's go-early lane runs the native backend's packages before the venv
and the Debian packages are installed; a test that needs one of their
libraries (NVRTC, cuBLASLt, hipRTC, ...) skips there, and the go lane runs
exactly these tests again once the libraries are in place, so every test
runs with everything it needs, and the long compile-and-emulate tests start
while the installs still download.

Exit status: 1 if any test or package failed (or the input was not go
test's), else 0. Standard library only: it runs before the venv exists.
"""

import argparse
import json
import sys
from collections import defaultdict


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skipped", required=True, help="file to write the skipped tests to")
    args = ap.parse_args()
    output = defaultdict(list)  # (package, test) -> output lines
    skipped = set()
    failed = False
    for line in sys.stdin:
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            sys.stdout.write(line)  # build errors and the like come as plain text
            failed = failed or line.startswith("FAIL")
            continue
        pkg, test, action = ev.get("Package", ""), ev.get("Test", ""), ev.get("Action")
        if action == "output":
            if test:
                output[(pkg, test)].append(ev.get("Output", ""))
            else:
                sys.stdout.write(ev.get("Output", ""))
        elif action == "skip" and test:
            skipped.add((pkg, test.split("/")[0]))
        elif action == "fail":
            failed = True
            if test:
                sys.stdout.write("".join(output.pop((pkg, test), [])))
        elif action in ("pass", "skip") and test:
            output.pop((pkg, test), None)
        sys.stdout.flush()
    by_package = defaultdict(list)
    for pkg, test in sorted(skipped):
        by_package[pkg].append(test)
    with open(args.skipped, "w") as f:
        for pkg, tests in by_package.items():
            f.write(f"{pkg}\t^({'|'.join(tests)})$\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
