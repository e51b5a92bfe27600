# Sourced by the device scripts (scripts/h100-*.sh): one step function, so
# each script is its list of steps. The caller sets deadline (seconds the
# whole script may take), start (its start, date +%s) and log (a file).
#
# step NAME SECONDS CMD...: run CMD if at least 30 s of the deadline are
# left, for at most SECONDS (cut to what is left, less 15 s to pack the
# results), teeing its output to the log without the sweep's "..." start
# lines, and log its exit status. STEPS="a,b" runs only the steps whose
# name contains one of the words.
step() {
  local name=$1 want=$2; shift 2
  if [ -n "${STEPS:-}" ] && ! echo ",$STEPS," | tr ',' '\n' | grep -v '^$' | grep -qF -f - <(echo "$name"); then return; fi
  local left=$(( deadline - ($(date +%s) - start) - 15 ))
  if [ "$left" -lt 30 ]; then echo "=== SKIP $name: ${left}s left" | tee -a "$log"; return; fi
  [ "$want" -gt "$left" ] && want=$left
  echo; echo "=== $name (limit ${want}s, t=$(( $(date +%s) - start ))s)" | tee -a "$log"
  timeout -k 5 "$want" "$@" 2>&1 | grep -v '^\[.*\] .*: .* \.\.\.$' | tee -a "$log"
  echo "=== $name: exit ${PIPESTATUS[0]}" | tee -a "$log"
}
