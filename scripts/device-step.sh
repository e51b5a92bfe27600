# Sourced by the device scripts (scripts/h100-*.sh): one step function, so
# each script is its list of steps. The caller sets deadline (seconds the
# whole script may take), start (its start, date +%s) and log (a file).
#
# step NAME SECONDS CMD...: run CMD if at least STEP_MIN (default 30) s of
# the deadline are left, for at most SECONDS (cut to what is left, less
# STEP_RESERVE, default 15 s, to pack the results), teeing its output to the
# log without the sweep's "..." start lines, and log its exit status and
# time. A skipped step or a non-zero exit adds one to fails, for scripts that
# exit on it. STEPS="a,b" runs only the steps whose name contains one of the
# words.
fails=${fails:-0}
step() {
  local name=$1 want=$2; shift 2
  if [ -n "${STEPS:-}" ] && ! echo ",$STEPS," | tr ',' '\n' | grep -v '^$' | grep -qF -f - <(echo "$name"); then return; fi
  local left=$(( deadline - ($(date +%s) - start) - ${STEP_RESERVE:-15} ))
  if [ "$left" -lt "${STEP_MIN:-30}" ]; then echo "=== SKIP $name: ${left}s left" | tee -a "$log"; fails=$((fails+1)); return; fi
  [ "$want" -gt "$left" ] && want=$left
  echo; echo "=== $name (limit ${want}s, t=$(( $(date +%s) - start ))s)" | tee -a "$log"
  local t0=$(date +%s)
  timeout -k 5 "$want" "$@" 2>&1 | grep -v '^\[.*\] .*: .* \.\.\.$' | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  echo "=== $name: exit $rc after $(( $(date +%s) - t0 ))s" | tee -a "$log"
  [ "$rc" -eq 0 ] || fails=$((fails+1))
}
