#!/usr/bin/env bash
# How long ./test.sh takes on a fresh machine (issue 44's method): a fresh
# clone of this repository run with an empty HOME, so the Go build and
# module caches, pip's and uv's caches, xbench's caches (compile caches, lint tools,
# ROCm downloads) and the framework venv itself (downloaded from PyPI) all
# start empty. The Debian packages test.sh installs are the one thing it
# cannot remove: if they are installed here, apt's time is not counted.
#   bash scripts/fresh-ci.sh [WORKDIR]     (WORKDIR default /tmp/xbench-fresh)
# It prints the wall and CPU time of .ci/run and the lanes' table, and
# leaves the log and the lanes' logs in WORKDIR. Run it on an idle machine:
# anything else running is counted.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
w=${1:-/tmp/xbench-fresh}
rm -rf "$w" && mkdir -p "$w/home"
git clone -q "$src" "$w/clone" || exit 1
cd "$w/clone" || exit 1
rm -rf "/tmp/torchinductor_$(id -un)"  # inductor's default cache is outside HOME
env -i HOME="$w/home" PATH="$PATH" USER="$(id -un)" LANG=C.UTF-8 CI=true \
  ${PYENV_ROOT:+PYENV_ROOT="$PYENV_ROOT"} \
  /usr/bin/time -f "%e s wall, %U s user, %S s sys" bash .ci/run >"$w/ci.log" 2>&1
rc=$?
echo "exit $rc; log: $w/ci.log"
grep -A20 "lanes (wall" "$w/ci.log" | grep -E "^\s+[a-z+-]+ +(ok|FAILED)|lane  " 
tail -n 1 "$w/ci.log"
exit $rc
