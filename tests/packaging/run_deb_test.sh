#!/bin/bash
# The Debian package builds (cpack -G DEB from the build tree) and holds what operators need:
# the probe, its MPI transport plugins, the prolog, validate-image, the trace library, the man
# page, the examples; no MPI among its dependencies; the
# packaged probe runs (`--version`) from the unpacked package.
#
# usage: run_deb_test.sh BUILD_DIR WORKDIR VERSION
set -euo pipefail
build=$(realpath "${1:?usage: run_deb_test.sh BUILD_DIR WORKDIR VERSION}")
work=${2:?missing WORKDIR}
version=${3:?missing VERSION}

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
command -v cpack >/dev/null || fail "cpack not found"
command -v dpkg-deb >/dev/null || skip "dpkg-deb not found (not a Debian system)"
rm -rf "$work"; mkdir -p "$work"; work=$(realpath "$work")

(cd "$build" && timeout 600 cpack -G DEB -B "$work" >"$work/cpack.log" 2>&1) ||
  { tail -n 20 "$work/cpack.log" >&2; fail "cpack -G DEB failed in $build"; }
deb=$(ls "$work"/denpex-probe_"$version"_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || { ls "$work" >&2; fail "no denpex-probe_${version}_*.deb in $work"; }

dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./|/|' >"$work/contents"
for f in /usr/bin/denpex-probe /usr/sbin/denpex-prolog /usr/bin/denpex-validate-image \
         /usr/share/man/man1/denpex-probe.1 /usr/share/doc/denpex-probe/slurm/README.md \
         /usr/share/doc/denpex-probe/slurm/prolog.conf.example; do
  grep -qx "$f" "$work/contents" || { cat "$work/contents" >&2; fail "$deb does not contain $f"; }
done
grep -q '^/usr/lib/.*libdenpex-trace\.so$' "$work/contents" || fail "$deb does not contain libdenpex-trace.so"
grep -q '^/usr/share/doc/denpex-probe/examples/' "$work/contents" || fail "$deb holds no examples"
! grep -q 'standin\|libnccl\|libtorch_cuda\|libcuda' "$work/contents" || fail "$deb contains test stand-ins"

[ "$(dpkg-deb -f "$deb" Package)" = denpex-probe ] || fail "Package field is not denpex-probe"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "Version field is not $version"
dpkg-deb -f "$deb" Depends | grep -q 'jq' || fail "Depends lacks jq: $(dpkg-deb -f "$deb" Depends)"
# MPI is loaded, not linked (issue 15): the package needs no MPI; the plugins for both ABIs
# are in /usr/lib/denpex/, where the probe finds them from /usr/bin.
! dpkg-deb -f "$deb" Depends | grep -q 'libopenmpi\|libmpich' || fail "Depends names an MPI: $(dpkg-deb -f "$deb" Depends)"
for p in denpex-mpi-open-mpi.so denpex-mpi-mpich.so; do
  grep -qx "/usr/lib/denpex/$p" "$work/contents" || fail "$deb does not contain /usr/lib/denpex/$p"
done

dpkg-deb -x "$deb" "$work/root"
got=$("$work/root/usr/bin/denpex-probe" --version)
[ "$got" = "denpex-probe $version" ] || fail "packaged denpex-probe --version says '$got'"
[ -x "$work/root/usr/sbin/denpex-prolog" ] || fail "packaged prolog is not executable"
! readelf -d "$work/root/usr/bin/denpex-probe" | grep NEEDED | grep -q libmpi ||
  fail "the packaged denpex-probe links an MPI library"
"$work/root/usr/bin/denpex-validate-image" --help | grep -q '^usage: validate-image' ||
  fail "packaged denpex-validate-image --help does not print its usage"
echo "ok: $(basename "$deb"), $(wc -l <"$work/contents") entries"
echo PASS
