#!/bin/bash
# The Debian package builds (cpack -G DEB from the build tree) and holds what operators need:
# the probe, its MPI transport plugins, the prolog, validate-image, the trace library, the man
# pages, the examples; no MPI among its dependencies; the packaged probe runs (`--version`) from
# the unpacked package; lintian reports no error (its warnings are printed).
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
         /usr/share/man/man1/denpex-probe.1.gz /usr/share/man/man1/denpex-validate-image.1.gz \
         /usr/share/man/man8/denpex-prolog.8.gz /usr/share/doc/denpex-probe/copyright \
         /usr/share/doc/denpex-probe/changelog.gz \
         /usr/share/doc/denpex-probe/slurm/README.md \
         /usr/share/doc/denpex-probe/slurm/prolog.conf.example; do
  grep -qx "$f" "$work/contents" || { cat "$work/contents" >&2; fail "$deb does not contain $f"; }
done
# A preload library lives in a private directory, never where the loader looks.
grep -Eq '^/usr/lib/[^/]+/denpex/libdenpex-trace\.so$' "$work/contents" || fail "$deb has no /usr/lib/<multiarch>/denpex/libdenpex-trace.so"
! grep -Eq '^/usr/lib/([^/]+/)?libdenpex' "$work/contents" || fail "$deb puts libdenpex-trace.so in a loader directory"
[ -z "$(dpkg-deb --ctrl-tarfile "$deb" | tar -t | grep -E 'postinst|postrm')" ] || fail "$deb has maintainer scripts (an ldconfig call?)"
grep -q '^/usr/share/doc/denpex-probe/examples/' "$work/contents" || fail "$deb holds no examples"
! grep -q 'standin\|libnccl\|libtorch_cuda\|libcuda' "$work/contents" || fail "$deb contains test stand-ins"

[ "$(dpkg-deb -f "$deb" Package)" = denpex-probe ] || fail "Package field is not denpex-probe"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "Version field is not $version"
dpkg-deb -f "$deb" Depends | grep -q 'jq' || fail "Depends lacks jq: $(dpkg-deb -f "$deb" Depends)"
# MPI is loaded, not linked: the package needs no MPI; the plugins for both ABIs
# are in the private /usr/lib/<multiarch>/denpex/ (no ldconfig call), where the probe finds them
# from /usr/bin.
! dpkg-deb -f "$deb" Depends | grep -q 'libopenmpi\|libmpich' || fail "Depends names an MPI: $(dpkg-deb -f "$deb" Depends)"
for p in denpex-mpi-open-mpi.so denpex-mpi-mpich.so; do
  grep -Eqx "/usr/lib/[^/]+/denpex/$p" "$work/contents" || fail "$deb does not contain /usr/lib/<multiarch>/denpex/$p"
done

dpkg-deb -x "$deb" "$work/root"
# The licence is named, with Debian's copy of its text (not "all rights reserved").
copyright=$work/root/usr/share/doc/denpex-probe/copyright
grep -qx 'License: Apache-2.0' "$copyright" || fail "the copyright file names no Apache-2.0 licence"
grep -q '/usr/share/common-licenses/Apache-2.0' "$copyright" || fail "the copyright file does not point to /usr/share/common-licenses/Apache-2.0"
[ -r "$work/root/usr/share/doc/denpex-probe/docs/finding-codes.md" ] || fail "$deb holds no docs/ pages beside the README"
got=$("$work/root/usr/bin/denpex-probe" --version)
[ "$got" = "denpex-probe $version" ] || fail "packaged denpex-probe --version says '$got'"
[ -x "$work/root/usr/sbin/denpex-prolog" ] || fail "packaged prolog is not executable"
! readelf -d "$work/root/usr/bin/denpex-probe" | grep NEEDED | grep -q libmpi ||
  fail "the packaged denpex-probe links an MPI library"
# The packaged probe finds its plugin there: a 1-rank mpirun gives a verdict (0 or 1), not the
# exit 2 of a missing transport plugin.
if command -v mpirun >/dev/null; then
  rc=0
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 10 120 \
    mpirun -np 1 "$work/root/usr/bin/denpex-probe" -q --timeout 30 >"$work/mpirun.out" 2>&1 || rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$work/mpirun.out" >&2; fail "mpirun -np 1 of the packaged denpex-probe exited $rc"; }
fi
"$work/root/usr/bin/denpex-validate-image" --help | grep -q '^usage: validate-image' ||
  fail "packaged denpex-validate-image --help does not print its usage"
# Debian's own checker: errors fail, warnings are shown. Run as root it complains once about
# that; the line is dropped.
command -v lintian >/dev/null || fail "lintian not found (tools/install-deps.sh installs it)"
lintian --tag-display-limit 0 "$deb" >"$work/lintian.txt" 2>&1 || true
{ grep -v 'running with root privileges' "$work/lintian.txt" || true; } | sed 's/^/  lintian: /'
! grep -q '^E: ' "$work/lintian.txt" || fail "lintian reports errors on $deb (above)"
echo "ok: $(basename "$deb"), $(wc -l <"$work/contents") entries, no lintian error"
echo PASS
