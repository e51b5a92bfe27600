#!/bin/sh
# Checks the flake's Nix sources without building anything (no cache or
# network needed):
#   1. every .nix file (flake.nix and nix/**) parses: nix-instantiate --parse
#   2. the shell logic evaluates against a stand-in nixpkgs:
#      nix-instantiate --eval --strict nix/check/stub-eval.nix
# Installs Debian's nix-bin (quietly, with apt-get) when nix-instantiate is
# missing. Exits non-zero and names the file on any failure.
set -eu

root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
cd "$root"

if ! command -v nix-instantiate >/dev/null 2>&1; then
	echo "check-nix: nix-instantiate not found; installing nix-bin with apt-get" >&2
	sudo=
	if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
	export DEBIAN_FRONTEND=noninteractive
	if ! $sudo apt-get install -y -qq nix-bin >/dev/null 2>&1; then
		$sudo apt-get update -qq >/dev/null 2>&1 || true
		if ! $sudo apt-get install -y -qq nix-bin >/dev/null; then
			echo "check-nix: FAIL: could not install nix-bin" >&2
			exit 1
		fi
	fi
	if ! command -v nix-instantiate >/dev/null 2>&1; then
		echo "check-nix: FAIL: nix-bin installed but nix-instantiate is still not on PATH" >&2
		exit 1
	fi
fi

files=$( { echo flake.nix; find nix -type f -name '*.nix'; } | sort)
if [ ! -f flake.nix ]; then
	echo "check-nix: FAIL: flake.nix: missing" >&2
	exit 1
fi

err=$(mktemp)
trap 'rm -f "$err"' EXIT
failed=0
n=0
for f in $files; do
	n=$((n + 1))
	if nix-instantiate --parse "$f" >/dev/null 2>"$err"; then
		echo "check-nix: ok    parse $f"
	else
		echo "check-nix: FAIL  parse $f" >&2
		sed 's/^/    /' "$err" >&2
		failed=1
	fi
done

stub=nix/check/stub-eval.nix
if nix-instantiate --eval --strict "$stub" >/dev/null 2>"$err"; then
	echo "check-nix: ok    eval  $stub"
else
	echo "check-nix: FAIL  eval  $stub" >&2
	sed 's/^/    /' "$err" >&2
	failed=1
fi

if [ "$failed" -ne 0 ]; then
	echo "check-nix: FAILED" >&2
	exit 1
fi
echo "check-nix: $n files parse; stand-in evaluation ok"
