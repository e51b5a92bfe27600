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

# setup_venv: .venv -> ~/.cache/xbench/venv-<hash of requirements.txt>.
# The venv lives outside the clone so a fresh clone (CI) reuses it.
setup_venv() {
  local hash cache target
  hash=$(sha256sum requirements.txt | cut -c1-12)
  cache="${XBENCH_CACHE:-$HOME/.cache/xbench}"
  target="$cache/venv-$hash"
  if [ ! -x "$target/bin/python" ] || [ ! -f "$target/.complete" ]; then
    say "creating Python environment $target (PyTorch is several GB the first time)"
    rm -rf "$target"; mkdir -p "$cache"
    python3 -m venv "$target"
    "$target/bin/pip" install -q --upgrade pip
    "$target/bin/pip" install -q -r requirements.txt
    touch "$target/.complete"
  fi
  if [ "$(readlink .venv 2>/dev/null)" != "$target" ]; then
    rm -rf .venv && ln -s "$target" .venv
  fi
}

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
