# Shared by setup.sh and test.sh: install what is missing, idempotently.
# Everything here is fast when it has run once on this machine.

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'setup: %s\n' "$*" >&2; exit 1; }

need_tools() {
  command -v go >/dev/null || die "Go is not installed (need Go 1.26+): https://go.dev/dl/"
  command -v python3 >/dev/null || die "python3 is not installed (need Python 3.11+)"
}

apt_install() { # apt_install PKG... : install Debian packages that are missing
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || die "need Debian packages ${missing[*]} (no apt-get here)"
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  say "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# debian_mirror: the Debian mirror this machine's apt already uses.
debian_mirror() {
  local u
  u=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null)
  [ -n "$u" ] || u=$(awk '$1 == "deb" && !/security/ {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null)
  [ -n "$u" ] && echo "$u"
}

# sid_download DIR PKG...: download Debian unstable's .deb of each package
# into DIR with a private apt state (this machine's sources and packages
# are left alone): Debian 12 has no hipBLASLt or rocBLAS, unstable has both.
sid_download() {
  local dir=$1 uri st; shift
  uri=$(debian_mirror) || die "no Debian mirror in /etc/apt: cannot fetch ${*}"
  st=$(mktemp -d)
  mkdir -p "$st/lists/partial" "$st/cache/archives/partial" "$dir"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri sid main" >"$st/sources.list"
  local o=(-o Dir::Etc::sourcelist="$st/sources.list" -o Dir::Etc::sourceparts=/dev/null
    -o Dir::State::Lists="$st/lists" -o Dir::Cache="$st/cache" -o APT::Sandbox::User=root
    -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false)
  apt-get "${o[@]}" update -qq >/dev/null && (cd "$dir" && apt-get "${o[@]}" download "$@" >/dev/null)
  local rc=$?
  rm -rf "$st"
  return $rc
}

# rocm_blas_headers DIR: AMD's hipBLASLt, rocBLAS, hipBLAS-common and HIP
# headers (Debian unstable's -dev packages, ~400 KB) unpacked into DIR
# once, with the packages' names in DIR/PACKAGES: TestROCmBLASHeaders
# checks the native backend's hipBLASLt and rocBLAS bindings against them.
rocm_blas_headers() {
  local dir=$1 tmp d
  [ -f "$dir/.complete" ] && return 0
  say "fetching AMD's hipBLASLt/rocBLAS headers (Debian unstable's -dev packages) into $dir"
  tmp=$(mktemp -d)
  sid_download "$tmp" libhipblaslt-dev librocblas-dev libhipblas-common-dev libamdhip64-dev ||
    { rm -rf "$tmp"; die "could not download AMD's BLAS headers from Debian unstable"; }
  rm -rf "$dir"; mkdir -p "$dir"
  for d in "$tmp"/*.deb; do dpkg-deb -x "$d" "$tmp/x" && basename "$d" >>"$dir/PACKAGES"; done
  cp -r "$tmp/x/usr/include/." "$dir/"
  rm -rf "$tmp"
  touch "$dir/.complete"
}

# rocm_llvm DIR: ROCm 7.2.2's LLVM (librocmllvm.so, the AMDGPU back end
# that knows gfx942) from PyPI's rocm-llvm-python wheel (62 MB), unpacked
# into DIR once; gpu.GFX942Compile generates the kernels' gfx942 code with it.
ROCM_LLVM_PYTHON=7.2.2.562.46
rocm_llvm() {
  local dir=$1
  [ -f "$dir/librocmllvm.so" ] && return 0
  say "fetching ROCm's LLVM (rocm-llvm-python $ROCM_LLVM_PYTHON) into $dir"
  wheel_member "rocm-llvm-python==$ROCM_LLVM_PYTHON" rocm/llvm/librocmllvm.so "$dir/librocmllvm.so" ||
    die "could not fetch rocm/llvm/librocmllvm.so from PyPI's rocm-llvm-python==$ROCM_LLVM_PYTHON"
}

# wheel_member SPEC SUFFIX DEST: PyPI's wheel of SPEC (no dependencies,
# downloaded by system pip) and its one member whose name ends with SUFFIX,
# written to DEST (executable; atomically, so a DEST that exists is whole).
wheel_member() {
  local spec=$1 suffix=$2 dest=$3 tmp
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "$spec" || { rm -rf "$tmp"; return 1; }
  mkdir -p "$(dirname "$dest")"
  python3 - "$tmp" "$suffix" "$dest" <<'PY' || { rm -rf "$tmp"; return 1; }
import glob, os, sys, zipfile
whl = zipfile.ZipFile(glob.glob(os.path.join(sys.argv[1], "*.whl"))[0])
name = next(n for n in whl.namelist() if n.endswith(sys.argv[2]))
tmp = sys.argv[3] + ".tmp"
with whl.open(name) as src, open(tmp, "wb") as dst:
    dst.write(src.read())
os.chmod(tmp, 0o755)
os.rename(tmp, sys.argv[3])
PY
  rm -rf "$tmp"
}

# Environments by machine (docs/usage.md, "Environments"): the machine
# (cpu, nvidia, amd), its requirements files and their install order are
# defined once, in plugins/_python/xbench_py/environment.py, which runs
# under the system's python3 (the standard library only).
environment() { PYTHONPATH=plugins/_python python3 -m xbench_py.environment "$@"; }

# detect_machine: cpu, nvidia or amd (XBENCH_MACHINE overrides).
detect_machine() {
  local out
  out=$(environment machine) || exit 2
  echo "${out%%$'\t'*}"
}

# requirement_files MACHINE: the machine's requirements files, in order.
requirement_files() {
  PYTHONPATH=plugins/_python python3 -c 'import sys; from xbench_py.environment import REQUIREMENTS; print(" ".join(REQUIREMENTS[sys.argv[1]]))' "$1"
}

# venv_key FILE...: the cache key of a venv installed from these files:
# their content's hash (for the CPU set's one file, the same key as
# before there were several sets, so CI's cached venv is reused).
venv_key() { cat "$@" | sha256sum | cut -c1-12; }

# uv_tool: $UV, the pinned uv that installs the framework venvs (and
# resolves the GPU sets in test_setup.py): $XBENCH_UV when set, else PyPI's
# uv wheel, its one binary unpacked once into the tools cache (no venv:
# wheel_member, as rocm_llvm's library).
UV_VERSION=0.13.10
uv_tool() {
  if [ -n "${XBENCH_UV:-}" ]; then
    [ -x "$XBENCH_UV" ] || die "XBENCH_UV=$XBENCH_UV: not an executable file (expected: a uv binary, or XBENCH_UV unset)"
    UV=$XBENCH_UV
    return 0
  fi
  UV="${XBENCH_CACHE:-$HOME/.cache/xbench}/tools/uv-$UV_VERSION/uv"
  [ -x "$UV" ] && return 0
  say "installing uv $UV_VERSION"
  wheel_member "uv==$UV_VERSION" .data/scripts/uv "$UV" || die "could not fetch the uv binary from PyPI's uv==$UV_VERSION"
}

# setup_venv [MACHINE]: .venv -> ~/.cache/xbench/venv-<key>, the machine's
# set installed (MACHINE: cpu when not given). The venv lives outside the
# clone so a fresh clone (CI) reuses it. One setup at a time per venv
# (flock): a second waits rather than deleting what the first installs.
# .complete is written only after every install succeeded, so a failed or
# killed install is redone from scratch on the next run.
setup_venv() {
  local machine=${1:-cpu} files cache target f
  read -r -a files <<<"$(requirement_files "$machine")"
  cache="${XBENCH_CACHE:-$HOME/.cache/xbench}"
  target="$cache/venv-$(venv_key "${files[@]}")"
  mkdir -p "$cache"
  (
    flock -n 9 || { say "another setup is installing $target: waiting for it to finish"; flock 9; }
    if [ ! -x "$target/bin/python" ] || [ ! -f "$target/.complete" ]; then
      say "creating Python environment $target for $machine (PyTorch is several GB the first time)"
      rm -rf "$target"
      uv_tool
      # uv's venv over python3, pip added by the first install: python3 -m
      # venv's ensurepip was the most of a venv's cost
      "$UV" venv -q --python "$(command -v python3)" "$target" || die "uv venv $target over $(command -v python3) failed"
      local seed=pip
      for f in "${files[@]}"; do
        local idx
        idx=$(environment_index_args "$f")
        # uv, not pip, installs the wheels: parallel downloads, and less
        # CPU on the 2-core CI machine (docs/results/ci-time.md). The
        # bytecode is compiled here, not left to first import: on a fresh
        # machine that moved more CPU into the tests than it saved, several
        # processes compiling the same modules at once. The venv gets pip
        # too, for what a user installs by hand. With an extra index
        # (PyTorch's ROCm wheels), every index is searched for the best
        # version of each package, as pip does. --system-certs: the
        # machine's trust store, as pip's (a proxy's CA is there, not in
        # uv's bundled roots).
        # shellcheck disable=SC2086
        "$UV" pip install -q --system-certs --python "$target/bin/python" --compile-bytecode \
          ${idx:+$idx --index-strategy unsafe-best-match} -r "$f" $seed || {
          [ -n "$idx" ] && say "$f comes from ${idx#--extra-index-url } (PyTorch's ROCm wheels are not on PyPI): if this machine cannot reach it, set XBENCH_TORCH_ROCM_INDEX to a mirror, or install it by hand: $target/bin/pip install $idx -r $f"
          die "installing $f into $target failed (uv's error above): $UV pip install --python $target/bin/python ${idx:+$idx }-r $f; rerun ./setup.sh to retry (nothing is marked complete)"
        }
        seed=
      done
      touch "$target/.complete"
    fi
  ) 9>"$target.lock" || exit $?
  link_venv "$target"
}

# environment_index_args FILE: pip's index arguments for FILE (PyTorch's
# ROCm index, $XBENCH_TORCH_ROCM_INDEX, for the AMD set's torch file).
environment_index_args() {
  PYTHONPATH=plugins/_python python3 -c 'import sys; from xbench_py.environment import index_args; print(" ".join(index_args(sys.argv[1])))' "$1"
}

link_venv() {
  if [ "$(readlink .venv 2>/dev/null)" != "$1" ]; then
    rm -rf .venv && ln -s "$1" .venv
  fi
}

# resolve_python FLAG VALUE: VALUE as a path; a bare name (python3) is
# looked up on PATH, as a shell would run it.
resolve_python() {
  local flag=$1 py=$2
  if [[ "$py" != */* ]]; then
    command -v "$py" 2>/dev/null || usage_die "$flag \"$py\": not found on PATH (expected: the path of a Python 3.11+ interpreter, or its name on PATH)"
  else
    echo "$py"
  fi
}

# check_python FLAG PATH: PATH's Python version ("3.12"); a PATH that is
# missing, not executable, not Python, or older than 3.11: exit 2 naming
# FLAG (--python or XBENCH_PYTHON), the value and what is expected.
check_python() {
  local flag=$1 py=$2 ver want="expected: the path of a Python 3.11+ interpreter"
  [ -e "$py" ] || usage_die "$flag \"$py\": no such file ($want)"
  { [ -f "$py" ] && [ -x "$py" ]; } || usage_die "$flag \"$py\": not an executable file ($want)"
  ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) ||
    usage_die "$flag \"$py\": not a Python interpreter (it failed to run a Python one-liner; $want)"
  [[ "$ver" =~ ^3\.([0-9]+)$ ]] || usage_die "$flag \"$py\": not a Python 3 interpreter (it printed \"${ver:0:40}\"; $want)"
  [ "${BASH_REMATCH[1]}" -ge 11 ] || usage_die "$flag \"$py\": Python $ver ($want)"
  echo "$ver"
}

# use_python FLAG PATH: .venv -> a venv over an existing interpreter (a
# cluster's or container's frameworks): --system-site-packages, so its
# frameworks are used as installed and what a fix command installs stays
# in the venv, not in the interpreter's own site-packages.
use_python() {
  local flag=$1 py=$2 ver cache target
  ver=$(check_python "$flag" "$py")
  # an interpreter of a venv is used as that venv: a venv made over it
  # would see its base interpreter's packages, not the venv's
  local prefix
  prefix=$("$py" -c 'import sys; print(sys.prefix if sys.prefix != sys.base_prefix else "")')
  if [ -n "$prefix" ] && [ -x "$prefix/bin/python" ]; then
    say "using $py (Python $ver): the venv $prefix"
    link_venv "$prefix"
    return 0
  fi
  cache="${XBENCH_CACHE:-$HOME/.cache/xbench}"
  target="$cache/venv-python-$(readlink -f "$py" | sha256sum | cut -c1-12)"
  mkdir -p "$cache"
  (
    flock 9
    if [ ! -x "$target/bin/python" ] || [ ! -f "$target/.complete" ]; then
      say "using $py (Python $ver) through $target (its packages visible: --system-site-packages)"
      rm -rf "$target"
      "$py" -m venv --system-site-packages "$target" 2>/dev/null ||
        { rm -rf "$target"; "$py" -m venv --system-site-packages --without-pip "$target"; } ||
        die "$py -m venv failed: cannot make a venv over $py"
      touch "$target/.complete"
    fi
  ) 9>"$target.lock" || exit $?
  link_venv "$target"
}

usage_die() { printf 'setup: %s\n' "$*" >&2; exit 2; }

# plugin_cmds: the Go packages of the go-plugin backends (runtime "plugin"
# in plugins/*/plugin.json), each built from its folder's cmd/<name>.
plugin_cmds() {
  python3 - <<'PY'
import glob, json, os
for m in sorted(glob.glob("plugins/*/plugin.json")):
    try:
        d = json.load(open(m))
    except ValueError:
        continue  # xbench names a bad manifest itself
    if d.get("runtime") == "plugin":
        print("./" + os.path.join(os.path.dirname(m), "cmd", d["name"]))
PY
}

# build_xbench: bin/xbench and every plugin binary beside it (xbench looks
# for them there), all static (CGO_ENABLED=0) so bin/ runs on any Linux.
build_xbench() {
  say "building bin/xbench and the plugin binaries"
  go mod download
  mkdir -p bin
  # shellcheck disable=SC2046
  CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench $(plugin_cmds)
}

# Lanes: test.sh runs independent groups of tests ("lanes") at once, each
# in the background with its output in its own log, so one lane's waits
# (process starts, timeouts, I/O) are another's CPU time.
#   lanes_init DIR        logs go to DIR/<lane>.log (DIR is emptied)
#   lane NAME CMD...      start CMD (a function or command) as lane NAME;
#                         it runs under set -e, its stdout and stderr logged
#   lane_await NAME...    (inside a lane) wait for the named lanes to end;
#                         fail, naming it, if one of them failed
#   lanes_wait            print each lane's log as it ends, then a table of
#                         lanes with their status, elapsed and CPU seconds;
#                         a failure's log is printed again last. Returns 1
#                         when any lane failed.
lanes_init() {
  LANE_DIR=$1 LANE_NAMES=() LANE_PIDS=() LANE_T0=$(date +%s)
  rm -rf "$LANE_DIR" && mkdir -p "$LANE_DIR"
  # Each lane is a process group of its own (set -m below), which an
  # interrupt of test.sh does not reach: it ends them here.
  trap 'lanes_kill; exit 130' INT TERM
}

lanes_kill() {
  local pid
  for pid in "${LANE_PIDS[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
}

lane() {
  local name=$1; shift
  date +%s > "$LANE_DIR/$name.start"
  set -m
  (
    # the status, end time and CPU seconds of the lane's processes
    # (written whole, then renamed: lane_await reads it from other lanes)
    trap 'rc=$?; { echo "$rc $(date +%s)"; times; } > "$LANE_DIR/$name.end.tmp"; mv "$LANE_DIR/$name.end.tmp" "$LANE_DIR/$name.end"' EXIT
    set -e
    "$@"
  ) > "$LANE_DIR/$name.log" 2>&1 < /dev/null &
  LANE_PIDS+=("$!") LANE_NAMES+=("$name")
  set +m
  say "lane $name started: $*"
}

lane_await() {
  local name rc waited=""
  for name in "$@"; do
    [ -f "$LANE_DIR/$name.start" ] || die "lane_await: no lane $name was started"
    [ -f "$LANE_DIR/$name.end" ] || { say "waiting for lane $name"; waited=1; }
    until [ -f "$LANE_DIR/$name.end" ]; do sleep 1; done
    rc=$(cut -d' ' -f1 "$LANE_DIR/$name.end" | head -n 1)
    [ "$rc" = 0 ] || die "lane $name failed (exit $rc), and this lane needs what it installs or makes"
  done
  [ -z "$waited" ] || say "lanes $* done: starting"
}

# _lane_end LANE: when the lane ended (now if it left no record: killed)
_lane_end() {
  local t
  t=$(sed -n 1p "$LANE_DIR/$1.end" 2>/dev/null | cut -d' ' -f2)
  echo "${t:-$(date +%s)}"
}

# _lane_cpu LANE: user+sys seconds of the lane's processes, from the
# children's line of times ("XmY.YYYs XmY.YYYs")
_lane_cpu() {
  sed -n 3p "$LANE_DIR/$1.end" 2>/dev/null | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } printf "%.0f", s }'
}

# _lanes_ticker: every LANE_TICK seconds (60), which lanes still run, so a
# long quiet stretch of CI's log says what it is waiting for.
_lanes_ticker() {
  local name left
  while sleep "${LANE_TICK:-60}" </dev/null >/dev/null 2>&1; do
    left=""
    for name in "${LANE_NAMES[@]}"; do
      [ -f "$LANE_DIR/$name.end" ] || left+=" $name"
    done
    [ -n "$left" ] && say "$(( $(date +%s) - LANE_T0 ))s: still running:$left"
  done
}

lanes_wait() {
  local name i rc first_failed="" done_pid ticker
  local -A running=()
  for i in "${!LANE_PIDS[@]}"; do running[${LANE_PIDS[$i]}]=${LANE_NAMES[$i]}; done
  _lanes_ticker & ticker=$!
  while [ ${#running[@]} -gt 0 ]; do
    rc=0 done_pid=""
    wait -n -p done_pid "${!running[@]}" || rc=$?
    [ -n "$done_pid" ] || break
    name=${running[$done_pid]}
    unset "running[$done_pid]"
    local took=$(( $(_lane_end "$name") - $(cat "$LANE_DIR/$name.start") ))
    if [ "$rc" -eq 0 ]; then
      say "lane $name: ok after ${took}s; its output:"
    else
      say "lane $name: FAILED (exit $rc) after ${took}s; its output:"
      [ -n "$first_failed" ] || first_failed=$name
    fi
    cat "$LANE_DIR/$name.log"
    echo "$rc" > "$LANE_DIR/$name.rc"
  done
  kill "$ticker" 2>/dev/null || true
  say "lanes (wall ${_lane_wall:=$(( $(date +%s) - LANE_T0 ))}s in all; logs in $LANE_DIR):"
  printf '  %-10s %-10s %8s %8s\n' lane status elapsed cpu >&2
  for name in "${LANE_NAMES[@]}"; do
    local end st
    end=$(_lane_end "$name")
    st=ok; [ "$(cat "$LANE_DIR/$name.rc")" = 0 ] || st="FAILED($(cat "$LANE_DIR/$name.rc"))"
    printf '  %-10s %-10s %7ss %7ss\n' "$name" "$st" $(( end - $(cat "$LANE_DIR/$name.start") )) "$(_lane_cpu "$name")" >&2
  done
  unset _lane_wall
  if [ -n "$first_failed" ]; then
    printf '\n\033[1;31m==> FAILED: lane %s (the first to fail); its log (%s) again:\033[0m\n' "$first_failed" "$LANE_DIR/$first_failed.log" >&2
    cat "$LANE_DIR/$first_failed.log" >&2
    printf '\033[1;31m==> FAILED: lane %s; see above\033[0m\n' "$first_failed" >&2
    return 1
  fi
}

# Lint tools, pinned, each installed once into the cache beside the venv:
# staticcheck from the Go module proxy, ruff from PyPI in a small venv of
# its own (in requirements.txt it would change the framework venv's key).
STATICCHECK_VERSION=v0.8.2
RUFF_VERSION=0.17.6
lint_tools() {
  local dir="${XBENCH_CACHE:-$HOME/.cache/xbench}/tools"
  STATICCHECK="$dir/staticcheck-$STATICCHECK_VERSION/staticcheck"
  RUFF="$dir/ruff-$RUFF_VERSION/bin/ruff"
  if [ ! -x "$STATICCHECK" ]; then
    say "installing staticcheck $STATICCHECK_VERSION"
    GOBIN="$(dirname "$STATICCHECK")" go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" ||
      die "could not install staticcheck $STATICCHECK_VERSION from the Go module proxy"
  fi
  if [ ! -x "$RUFF" ]; then
    say "installing ruff $RUFF_VERSION"
    rm -rf "$dir/ruff-$RUFF_VERSION"
    python3 -m venv "$dir/ruff-$RUFF_VERSION" && "$dir/ruff-$RUFF_VERSION/bin/pip" install -q "ruff==$RUFF_VERSION" ||
      { rm -rf "$dir/ruff-$RUFF_VERSION"; die "could not install ruff $RUFF_VERSION from PyPI"; }
  fi
}

# lint: gofmt, staticcheck (its checks beyond go vet's) and ruff (pyflakes:
# undefined, unused and shadowed names; ruff.toml) over the whole tree.
lint() {
  lint_tools
  local unformatted
  unformatted=$(git ls-files -z '*.go' | xargs -0 gofmt -l 2>&1)
  [ -z "$unformatted" ] || { printf 'gofmt: these files are not formatted (run gofmt -w):\n%s\n' "$unformatted"; return 1; }
  "$STATICCHECK" ./...
  "$RUFF" check --no-cache .
}
