#!/usr/bin/env bash
# One night of the nightly job (docs/nightly.md): pull, build, run a named
# suite (suites/<name>.json, a sweep file) into a dated folder, then rebuild
# the history over every night and the dashboard. Exit 3 when the newest
# night sits on a step up beyond FAIL_ON (default 5%), so cron or SLURM mail
# the failure.
#
#   scripts/nightly.sh SUITE [ROOT]
#     SUITE   suites/SUITE.json, e.g. gemm-square
#     ROOT    where nights accumulate (default results/nightly; keep it
#             outside the checkout, or on shared storage, for a real job)
# Environment: NO_PULL=1 skips git pull (CI, a pinned checkout);
#   SWEEP_ARGS adds sweep flags (--device cpu --shapes FILE for a dry run);
#   DASHBOARD (default ROOT/_site), FAIL_ON (default 5%), XBENCH (default bin/xbench).
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:?usage: scripts/nightly.sh SUITE [ROOT]}
root=${2:-results/nightly}
file=suites/$suite.json
[ -f "$file" ] || { echo "nightly: no suite $file (suites: $(ls suites | sed 's/\.json$//' | tr '\n' ' '))" >&2; exit 2; }
X=${XBENCH:-bin/xbench}
site=${DASHBOARD:-$root/_site}

if [ "${NO_PULL:-}" != 1 ]; then
  git pull --ff-only --quiet
fi
commit=$(git rev-parse HEAD)
if [ -z "${XBENCH:-}" ]; then
  mkdir -p bin
  CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench ./plugins/burnstyle-hip/cmd/burnstyle-hip
fi
export XBENCH_GIT_COMMIT=$commit

# One folder per night and commit: a rerun the same night resumes it.
night="$root/$suite/$(date -u +%Y-%m-%d)-${commit:0:10}"
mkdir -p "$night"
# A sweep exits 0 once every cell has a file, whatever the cells' statuses:
# failed and unsupported cells are points on the dashboard, not job failures.
# shellcheck disable=SC2086
"$X" sweep --config "$file" --results "$night" ${SWEEP_ARGS:-}

# Every night of this suite, oldest to newest by commit date (the history
# orders them; folder names only make them easy to find).
mapfile -t nights < <(find "$root/$suite" -mindepth 1 -maxdepth 1 -type d -not -name '_*' | sort)
set +e
"$X" history --repo . --out "$site/$suite" --fail-on-regression "${FAIL_ON:-5%}" "${nights[@]}"
rc=$?
set -e
echo "nightly: $night; dashboard $site/$suite/index.html (exit $rc)"
exit $rc
