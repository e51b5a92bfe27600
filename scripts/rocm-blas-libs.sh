#!/usr/bin/env bash
# The native backend's hipBLASLt and rocBLAS bindings against AMD's real
# libraries, on this machine (no GPU needed): Debian unstable's
# libhipblaslt1 and librocblas4 (~440 MB of .debs; librocblas.so alone is
# ~1 GB unpacked, so this is not in ./test.sh, which checks the bindings
# against the headers instead). TestROCmBLASLibraries looks every bound
# function up in each library's exported symbols, and logs what dlopen
# says here (Debian 12's glibc is older than those libraries need).
# Usage: scripts/rocm-blas-libs.sh [OUTDIR]   (~1-2 minutes; the log and a
# summary go to OUTDIR, default results/local/rocm-blas-libs)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
out=${1:-results/local/rocm-blas-libs}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say "downloading libhipblaslt1 and librocblas4 from Debian unstable"
sid_download "$work" libhipblaslt1 librocblas4 || die "download failed"
ls -l "$work"/*.deb | tee "$out/debs.txt"
say "unpacking the shared libraries"
for d in "$work"/*.deb; do
  dpkg-deb --fsys-tarfile "$d" | tar -x -C "$work" --wildcards './usr/lib/*/libhipblaslt.so*' './usr/lib/*/librocblas.so*' 2>/dev/null
done
lt=$(ls "$work"/usr/lib/*/libhipblaslt.so.*.* | head -n 1)
rb=$(ls "$work"/usr/lib/*/librocblas.so.*.* | head -n 1)
[ -f "$lt" ] && [ -f "$rb" ] || die "no libhipblaslt.so or librocblas.so in the packages"
XBENCH_LIBHIPBLASLT="$lt" XBENCH_LIBROCBLAS="$rb" go test -count=1 -v -run 'TestROCmBLASLibraries$' \
  ./plugins/burnstyle-hip/gpu/ 2>&1 | tee "$out/test.log"
rc=${PIPESTATUS[0]}
{
  echo "commit $(git rev-parse --short HEAD), scripts/rocm-blas-libs.sh, $(date -u +%F)"
  printf '%-10s %-42s %-22s %s\n' library package functions "dlopen on this machine"
  for lib in hipBLASLt rocBLAS; do
    low=$(echo "$lib" | tr A-Z a-z)
    deb=$(basename "$(ls "$work"/lib"$low"*.deb)")
    n=$(grep -o "$lib: [0-9]* of [0-9]* functions exported" "$out/test.log" | grep -o '[0-9]* of [0-9]*')
    dl=$(grep "$lib: dlopen" "$out/test.log" | sed 's/.*: dlopen[^:]*: //')
    printf '%-10s %-42s %-22s %s\n' "$lib" "$deb" "${n:-none} exported" "${dl:-?}"
  done
  echo "go test: rc $rc"
} | tee "$out/summary.txt"
exit "$rc"
