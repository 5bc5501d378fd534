#!/usr/bin/env bash
# Checks the portable tarball (tools/portable-build.sh) does what the README promises:
#   1. no binary needs a glibc symbol version above GLIBC_2.31 (the floor: Debian 11, Ubuntu
#      20.04), nor any libstdc++/libgcc_s version (those are linked in);
#   2. denpex-probe's NEEDED names no libstdc++, libgcc_s, libfmt or libmpi, and
#      libdenpex-trace.so exports no C++ runtime symbol (it is preloaded into other programs);
#   3. in a fresh Debian 11 root (debootstrap --variant=minbase bullseye, nothing else
#      installed), unpacked as the examples do (tar -C /opt/denpex -xzf): `denpex-probe --help`,
#      alone mode (a report, exit 0 or 1: no NCCL there), `--root` on a small tree, and
#      LD_PRELOAD=libdenpex-trace.so /bin/true;
#   4. MPI mode on this host, with its Open MPI (mpirun -n 2) and MPICH (mpiexec.hydra -n 3)
#      when it has them: one report of all ranks.
# Every failure is listed; the exit status is 1 when any check failed.
#
# Usage (as root): tests/portable/check.sh TARBALL [WORKDIR]
#   WORKDIR (default: the tarball's directory) keeps the pristine bullseye root, shared with
#   tools/portable-build.sh, and a throw-away copy of it.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
tarball=$(realpath "${1:?usage: tests/portable/check.sh TARBALL [WORKDIR]}")
work=${2:-$(dirname "$tarball")}
[ "$(id -u)" = 0 ] || { echo "check.sh: run as root (debootstrap, chroot)" >&2; exit 2; }
[ -r "$tarball" ] || { echo "check.sh: $tarball: not readable (make it with tools/portable-build.sh)" >&2; exit 2; }
mkdir -p "$work"
work=$(cd "$work" && pwd)
floor=2.31

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

unpacked=$work/check-unpacked
rm -rf "$unpacked"
mkdir -p "$unpacked"
tar -C "$unpacked" -xzf "$tarball"
for f in bin/denpex-probe bin/denpex-validate-image lib/libdenpex-trace.so; do
  [ -x "$unpacked/$f" ] || [ -f "$unpacked/$f" ] || fail "$f is not at the top of the tarball"
done
mapfile -t elves < <(cd "$unpacked" && find bin lib -type f | sort | while read -r f; do
  readelf -h "$f" >/dev/null 2>&1 && echo "$f"; done)
[ "${#elves[@]}" -gt 0 ] || fail "no ELF file in bin/ or lib/"

echo "--- 1. symbol versions (floor GLIBC_$floor)"
for f in "${elves[@]}"; do
  versions=$(objdump -T "$unpacked/$f" | grep -oE '\b(GLIBC|GLIBCXX|CXXABI|GCC)_[0-9][0-9.]*' | sort -u -V)
  glibc=$(grep '^GLIBC_' <<<"$versions" | sed 's/^GLIBC_//' | sort -V | tail -1)
  echo "     $f: $(tr '\n' ' ' <<<"$versions")"
  if [ -n "$glibc" ] && [ "$(printf '%s\n%s\n' "$glibc" "$floor" | sort -V | tail -1)" != "$floor" ]; then
    fail "$f needs GLIBC_$glibc, above the floor GLIBC_$floor"
  else
    ok "$f: highest glibc version GLIBC_${glibc:-none}"
  fi
  runtime=$(grep -E '^(GLIBCXX|CXXABI|GCC)_' <<<"$versions" | tr '\n' ' ' || true)
  [ -z "$runtime" ] || fail "$f needs the system's C++ runtime ($runtime): it must be linked in"
done

echo "--- 2. NEEDED entries"
# libmpi: the probe loads its MPI transport plugin (collect/mpi_plugin) only in MPI mode.
for f in "${elves[@]}"; do
  needed=$(readelf -d "$unpacked/$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "     $f: $needed"
  case $f in
    lib/denpex/*) continue ;;  # the MPI plugins: C, loaded where the job's MPI is
  esac
  for lib in $needed; do
    case $lib in
      libstdc++* | libgcc_s* | libfmt*) fail "$f needs $lib" ;;
      libz.so* | libzstd* | liblzma*) fail "$f needs $lib (the decompressors are linked in)" ;;
      libmpi*) fail "$f needs $lib (MPI must be loaded, not linked)" ;;
    esac
  done
done
exported=$(nm -D --defined-only "$unpacked/lib/libdenpex-trace.so" |
  awk '{ print $NF }' | grep -E '^(_ZN?K?St|_ZNSt|_ZTVN10__cxxabiv|__cxa_|__gxx_personality|_Unwind_)' || true)
if [ -n "$exported" ]; then
  fail "libdenpex-trace.so exports C++ runtime symbols (it would interpose on the traced program's): $(head -5 <<<"$exported" | tr '\n' ' ')"
else
  ok "libdenpex-trace.so exports no C++ runtime symbol"
fi

echo "--- 3. in a fresh Debian 11 root with nothing installed"
# shellcheck source=tools/bullseye-root.sh
. "$src/tools/bullseye-root.sh"
trap bullseye_unmount EXIT
bullseye_minbase "$work/bullseye-minbase"
root=$work/check-root
bullseye_copy "$work/bullseye-minbase" "$root"
mkdir -p "$root/opt/denpex"
tar -C "$root/opt/denpex" -xzf "$tarball"
# A small image tree for --root: Debian's loader configuration and no NCCL.
tree=$root/tmp/tree
mkdir -p "$tree/etc/ld.so.conf.d" "$tree/usr/lib/x86_64-linux-gnu"
echo "include /etc/ld.so.conf.d/*.conf" >"$tree/etc/ld.so.conf"
printf '/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n' \
  >"$tree/etc/ld.so.conf.d/x86_64-linux-gnu.conf"
printf 'PRETTY_NAME="check tree"\nID=debian\n' >"$tree/etc/os-release"
mkdir -p "$root/etc/denpex"
cp "$src/examples/container/baseline-image.json" "$root/etc/denpex/baseline.json"
bullseye_mount "$root"

# run NAME CMD...: CMD in the bare root with an empty environment; output in $work/check-NAME.*
run() {
  local name=$1 rc=0
  shift
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@" \
    >"$work/check-$name.out" 2>"$work/check-$name.err" || rc=$?
  echo "$rc"
}
show() { sed 's/^/       | /' "$work/check-$1.out" "$work/check-$1.err" | head -"${2:-15}" || true; }
not_loaded() { ! grep -qE 'error while loading shared libraries|cannot open shared object|version .GLIBC|symbol lookup error' "$work/check-$1.err"; }

rc=$(run help /opt/denpex/bin/denpex-probe --help)
if [ "$rc" = 0 ] && grep -q -- '--root' "$work/check-help.out"; then ok "denpex-probe --help"
else fail "denpex-probe --help: exit $rc"; show help; fi

rc=$(run alone /opt/denpex/bin/denpex-probe --color never --json /tmp/alone.json)
if { [ "$rc" = 0 ] || [ "$rc" = 1 ]; } && not_loaded alone && [ -s "$work/check-alone.out" ] &&
   jq -e '.' "$root/tmp/alone.json" >/dev/null 2>&1; then
  ok "denpex-probe alone: exit $rc, a report and its JSON"; show alone 6
else fail "denpex-probe alone: exit $rc (expected 0 or 1 with a report)"; show alone 25; fi

# examples/container/Dockerfile's RUN line, with the example image baseline: no NCCL here, so a
# reject (exit 1) naming it, with the JSON written.
rc=$(run dockerfile /opt/denpex/bin/denpex-probe --baseline /etc/denpex/baseline.json \
  --json /denpex-image.json --color never)
if [ "$rc" = 1 ] && not_loaded dockerfile && grep -q nccl "$work/check-dockerfile.out" &&
   jq -e '.' "$root/denpex-image.json" >/dev/null 2>&1; then
  ok "the Dockerfile's denpex-probe --baseline: exit 1 (no NCCL here), a report and its JSON"
else fail "the Dockerfile's denpex-probe --baseline: exit $rc (expected 1: no NCCL)"; show dockerfile 25; fi

rc=$(run root /opt/denpex/bin/denpex-probe --root /tmp/tree --color never --json /tmp/root.json)
if { [ "$rc" = 0 ] || [ "$rc" = 1 ]; } && not_loaded root &&
   jq -e '.' "$root/tmp/root.json" >/dev/null 2>&1; then
  ok "denpex-probe --root /tmp/tree: exit $rc, a report and its JSON"; show root 6
else fail "denpex-probe --root /tmp/tree: exit $rc (expected 0 or 1 with a report)"; show root 25; fi


rc=$(run preload env LD_PRELOAD=/opt/denpex/lib/libdenpex-trace.so /bin/true)
if [ "$rc" = 0 ] && [ ! -s "$work/check-preload.err" ]; then ok "LD_PRELOAD=libdenpex-trace.so /bin/true"
else fail "LD_PRELOAD=libdenpex-trace.so /bin/true: exit $rc"; show preload; fi

rc=$(run validate /opt/denpex/bin/denpex-validate-image --help)
if [ "$rc" = 0 ]; then ok "denpex-validate-image --help"
else fail "denpex-validate-image --help: exit $rc"; show validate; fi

bullseye_unmount
bullseye_remove "$root"

echo "--- 4. MPI mode on this host: the plugins (built against Debian 11's MPI headers) with its MPIs"
# One job of N ranks must print one N-rank report, under Open MPI's mpirun and MPICH's
# mpiexec.hydra alike; exit 0 or 1 is the host's judgement, not the transport's.
mpi_job() {  # mpi_job NAME N LAUNCHER...
  local name=$1 n=$2 rc=0
  shift 2
  timeout 300 "$@" "$unpacked/bin/denpex-probe" --color never >"$work/check-$name.out" \
    2>"$work/check-$name.err" || rc=$?
  if { [ "$rc" = 0 ] || [ "$rc" = 1 ]; } && grep -q "($n ranks on 1 host)" "$work/check-$name.out"; then
    ok "$name: one $n-rank report (exit $rc)"
  else
    fail "$name: exit $rc, expected one report of $n ranks"; show "$name" 20
  fi
}
if command -v mpirun >/dev/null && mpirun --version 2>&1 | grep -q "Open MPI"; then
  mpi_job open-mpi 2 mpirun --allow-run-as-root --oversubscribe -n 2
else echo "NOT CHECKED: Open MPI (no Open MPI mpirun on this host)"; fi
if command -v mpiexec.hydra >/dev/null; then
  mpi_job mpich 3 mpiexec.hydra -n 3
else echo "NOT CHECKED: MPICH (no mpiexec.hydra on this host)"; fi
if [ "$failures" -gt 0 ]; then
  echo "portable check: $failures FAILED"
  exit 1
fi
echo "portable check: all passed ($(basename "$tarball"), glibc floor $floor)"
