# Shared helpers for the real-wheel tests (sourced). Every environment they use is assembled
# from the wheel cache that tests/real/fetch.sh fills; a test never downloads. When the cache is
# incomplete a test skips (exit 77) naming what is missing, which under CI=true fails the run
# (tools/test.sh).
#   real_setup PROBE SCRATCH_BASE   sets PROBE, SCRATCH, ENVS, PY; skips without the cache
# Then:
#   nccl_lib NAME          the libnccl.so.2 of matrix environment NAME (nccl-2.21.5, torch-2.3.1)
#   copy_env SRC DEST      DEST: a hard-linked copy of matrix environment SRC (a site-packages a
#                          test may change; the cache's files are never written)
#   swap_nccl SITE NCCL    what `pip install nvidia-nccl-cu12==X` does to SITE: the NCCL wheel
#                          uninstalled (its files and dist-info), matrix environment NCCL's in
#                          its place
#   add_wheel SITE NCCL    what installing a second NCCL wheel does: its files over SITE's
#   probe_alone OUT [VAR=value...]  denpex-probe --json OUT.json with only these variables
#                          (plus a PATH and HOME of the test's); PROBE_RC is its exit code
#   py_run OUT CODE [VAR=value...]  the real Python running CODE with only these variables
#                          (LD_BIND_NOW=1 among them for the oracle); PY_RC, OUT.out, OUT.err
#   mapped_nccl OUT        the libnccl files that the Python of the last py_run had mapped (it
#                          prints them from /proc/self/maps: the MAPS snippet below)
# shellcheck source=tests/integration/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
# shellcheck source=tests/real/python.sh
source "$(dirname "${BASH_SOURCE[0]}")/python.sh"

REAL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/real/paths.sh
source "$(dirname "${BASH_SOURCE[0]}")/paths.sh"
ENVS=$WHEEL_TREES/env

real_setup() {
  PROBE=$1
  new_scratch "$2"
  local why
  if ! why=$("$REAL_DIR/fetch.sh" --check 2>&1 >/dev/null); then
    skip "the real-wheel cache is not there: ${why//$'\n'/; } (tests/real/run.sh fetches it)"
  fi
  PY=$(real_python) || skip "$PY"
  # The tests' environments are hard-linked copies of the trees', and a hard link cannot cross
  # filesystems or mounts (a build tree on another disk, trees bind-mounted into a root): the
  # scratch then goes inside the trees, and is removed when the test ends.
  local probe_file
  probe_file=$(find "$ENVS" -mindepth 2 -maxdepth 2 -name .denpex-env -print -quit)
  if [ -n "$probe_file" ] && ! ln "$probe_file" "$SCRATCH/.link-test" 2>/dev/null; then
    SCRATCH=$WHEEL_TREES/scratch/$(basename "$0" .sh).$$
    rm -rf "$SCRATCH"
    mkdir -p "$SCRATCH" || fail "cannot make $SCRATCH"
    chmod 755 "$SCRATCH"
    trap 'rm -rf "$SCRATCH"' EXIT
  fi
  rm -f "$SCRATCH/.link-test"
  mkdir -p "$SCRATCH/home"
  # The Python the wheels are for first on PATH (the probe reads its site-packages too, as a
  # user's shell would have it), and a HOME with no user site unless a test makes one.
  TEST_PATH="$(dirname "$PY"):/usr/bin:/bin"
}

nccl_lib() { echo "$ENVS/$1/nvidia/nccl/lib/libnccl.so.2"; }

copy_env() {
  rm -rf "$2"
  mkdir -p "$(dirname "$2")"
  cp -al "$ENVS/$1" "$2" || fail "cannot hard-link $ENVS/$1 to $2 (the cache and the build tree must share a filesystem)"
  rm -f "$2/.denpex-env"
}

swap_nccl() {
  local site=$1 from=$ENVS/$2
  rm -rf "$site/nvidia/nccl" "$site"/nvidia_nccl_cu*-*.dist-info
  mkdir -p "$site/nvidia"
  cp -al "$from/nvidia/nccl" "$site/nvidia/"
  cp -al "$from"/nvidia_nccl_cu*-*.dist-info "$site/"
}

add_wheel() {
  cp -alf "$ENVS/$2/." "$1/"
  rm -f "$1/.denpex-env"
}

probe_alone() {
  local out=$1; shift
  PROBE_RC=0
  env -i PATH="$TEST_PATH" HOME="$SCRATCH/home" "$@" "$PROBE" --json "$out.json" \
    >"$out.txt" 2>"$out.err" || PROBE_RC=$?
  [ "$PROBE_RC" = 0 ] || [ "$PROBE_RC" = 1 ] || { cat "$out.txt" "$out.err" >&2; fail "probe exit $PROBE_RC"; }
}

# Prints, after CODE ran, the libnccl files mapped in the process: what it really loaded.
MAPS='
import sys
seen = []
for line in open("/proc/self/maps"):
    path = line.split()[-1]
    if "libnccl" in path and path not in seen:
        seen.append(path)
for path in seen:
    print("MAPPED " + path)
'

py_run() {
  local out=$1 code=$2; shift 2
  PY_RC=0
  env -i PATH="$TEST_PATH" HOME="$SCRATCH/home" "$@" "$PY" -c "$code
$MAPS" >"$out.out" 2>"$out.err" || PY_RC=$?
  LAST_PY_OUT=$out.out
}

mapped_nccl() { sed -n 's/^MAPPED //p' "$LAST_PY_OUT"; }

# The symbols the probe's record lists as missing, one per line.
missing_symbols() { jq -r '.ranks[0].abi[].missing[]' "$1"; }

# finding CODE JSON: "severity ranks" of each finding with that code, ';'-joined.
finding() {
  jq -r --arg c "$1" '[.findings[] | select(.code==$c) | "\(.severity) \(.ranks|join(","))"] | join(";")' "$2"
}

# real_mpirun OUT WANT_EXIT mpirun-args...: as tests/integration/mpi_gate.sh runs it.
real_mpirun() {
  local out=$1 want=$2; shift 2
  local rc=0
  timeout -k 10 300 mpirun "$@" >"$out.txt" 2>"$out.err" || rc=$?
  # Open MPI 4.1.4's mpirun can segfault in PMIx_server_finalize tearing down a job after every
  # rank exited with the verdict (see tests/integration/mpi_gate.sh).
  if [ "$rc" = 139 ] && [ "$want" = 1 ] && grep -q "PMIx_server_finalize" "$out.err"; then rc=1; fi
  [ "$rc" = "$want" ] || { cat "$out.txt" "$out.err" >&2; fail "mpirun exit $rc, expected $want"; }
}
