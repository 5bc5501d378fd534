#!/bin/bash
# Hostile inputs, end to end through the real denpex-probe binary (the table of what the user
# sees is tests/hostile/FAULTS.md). One CTest test per case:
#
#   hostile.sh CASE PROBE STANDINS_DIR SCRATCH_DIR
#
# Every case asserts the exit code, the status in the JSON report, the finding code, a message
# in plain words, and that the run ended within --timeout + 2 s. Trees are built under
# SCRATCH_DIR, a directory in the build tree; SCRATCH_DIR "@tmp" builds them in a fresh
# directory under /tmp instead (the root-as-prolog cases run from both, since /tmp is
# writable by every user but sticky, and a root-owned entry there cannot be replaced).
# Exit 0 pass, 1 fail, 77 skipped (something the case needs is absent: the reason is printed).
set -u
case_name=$1 probe=$2 standins=$3 scratch=$4
# Cases that run the probe as another user (nobody) when started as root. That user may not be
# able to reach the build tree (a clone in root's home, mode 0700), so their tree and a copy of
# the probe go to a fresh directory under /tmp that everyone may enter. In alone mode the probe
# needs nothing beside its executable (the MPI plugins, ../lib/denpex/ next to it in the build
# tree, are loaded in MPI mode only) and the system's libraries.
as_user=no
case $case_name in loader_check_*) [ "$(id -u)" -eq 0 ] && as_user=yes ;; esac
[ "$as_user" = yes ] && scratch=@tmp
if [ "$scratch" = @tmp ]; then
  scratch=$(mktemp -d /tmp/denpex-hostile.XXXXXX) || exit 1
  trap 'chmod -R u+rwX "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
fi
if [ "$as_user" = yes ]; then
  mkdir -p "$scratch/bin" && cp "$probe" "$scratch/bin/denpex-probe" || exit 1
  chmod 0755 "$scratch" "$scratch/bin" "$scratch/bin/denpex-probe"
  probe=$scratch/bin/denpex-probe
fi

W=$scratch/$case_name
rm -rf "$W"
mkdir -p "$W/lib" "$W/home" "$W/emptybin"
chmod 755 "$scratch" "$W" "$W/lib"
T=4                      # --timeout for every probe run
BOUND=$((T + 2))         # the run must end within this plus the baseline's slack (below)
SLACK=0
REAL_NCCL=${DENPEX_REAL_NCCL:-$({ /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null; } |
  sed -n 's/^[[:space:]]*libnccl\.so\.2 (.*) => //p' | head -1)}
fail=0

say() { printf '%s\n' "$*"; }
bad() { say "FAIL [$case_name]: $*"; fail=1; }
skip() { say "SKIP [$case_name]: $*"; exit 77; }

# run ARGS...: runs the probe in a clean environment (no python3 on PATH, HOME inside the case
# dir) with $LDP as LD_LIBRARY_PATH; sets rc, secs; stdout/stderr in $W/out, $W/err; the JSON
# report (when the mode writes one) in $W/report.json.
LDP=""
EXTRA_ENV=()
run() {
  rm -f "$W/report.json"
  local t0 t1
  t0=$(date +%s%N)
  timeout -k 2 $((BOUND + 20)) env -i HOME="$W/home" PATH="$W/emptybin" LD_LIBRARY_PATH="$LDP" \
    DENPEX_HOSTILE_MARKER="$W/marker" "${EXTRA_ENV[@]}" "$probe" "$@" >"$W/out" 2>"$W/err"
  rc=$?
  t1=$(date +%s%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
}

# run_json ARGS...: run with --timeout and --json.
run_json() { run --timeout "$T" --json "$W/report.json" "$@"; }

# Assertions.
expect_rc() {
  [ "$rc" -eq "$1" ] || { bad "exit $rc, expected $1"; sed 's/^/  stderr: /' "$W/err" | head -20; }
}
expect_bounded() {
  awk -v s="$secs" -v b="$BOUND" -v k="$SLACK" 'BEGIN { exit !(s <= b + k) }' ||
    bad "took $secs s, more than --timeout $T + 2 s + ${SLACK} s (twice a healthy run's time, measured now)"
}
jqr() { jq -r "$@" "$W/report.json" 2>/dev/null; }
expect_json() {  # expect_json JQ_EXPR DESCRIPTION
  [ -s "$W/report.json" ] || { bad "no JSON report"; return; }
  jq -e "$1" "$W/report.json" >/dev/null 2>&1 || { bad "$2 (jq: $1)"; jq -c "$3" "$W/report.json" 2>/dev/null | head -5 | sed 's/^/  /'; }
}
expect_finding() {  # expect_finding CODE SEVERITY MESSAGE_SUBSTRING
  expect_json "any(.findings[]; .code == \"$1\" and .severity == \"$2\" and (.message | contains(\"$3\")))" \
    "no $2 finding $1 whose message says \"$3\"" '.findings[] | {code, severity, message}'
}
expect_status() {  # expect_status SECTION STATUS  (section of rank 0's record: nccl, torch, cuda_driver)
  expect_json ".ranks[0].$1.status == \"$2\"" "$1.status is not $2" ".ranks[0].$1"
}
# A command that is fatal to judge (exit 2) prints one line on stderr naming the file.
expect_one_line_naming() {  # expect_one_line_naming PATH WORDS
  local lines
  lines=$(wc -l <"$W/err")
  [ "$lines" -eq 1 ] || bad "stderr has $lines lines, expected 1"
  grep -qF -- "$1" "$W/err" || bad "stderr does not name $1"
  grep -qiE -- "$2" "$W/err" || bad "stderr does not say /$2/"
  say "  stderr: $(head -c 300 "$W/err")"
}
# Peak RSS in KiB of the last `measured` run (GNU time), or empty when /usr/bin/time is absent.
measured() {
  if [ -x /usr/bin/time ]; then
    EXTRA_ENV=() ; local t0 t1
    t0=$(date +%s%N)
    /usr/bin/time -f '%M' -o "$W/rss" timeout -k 2 $((BOUND + 20)) \
      env -i HOME="$W/home" PATH="$W/emptybin" "$probe" "$@" >"$W/out" 2>"$W/err"
    rc=$?
    t1=$(date +%s%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    rss_kib=$(tail -1 "$W/rss")
    # GNU time appends its own line to nothing else; stderr of the probe is untouched.
  else
    run "$@"
    rss_kib=""
  fi
}
# The refusal of a huge file costs no more than 2 MiB over the program's own footprint (its
# peak RSS for --version, measured now: about 5.6 MB here, more under ASan): docs/testing.md's
# "~6 MB peak memory". Reading even 1% of the 2 GB input would show.
expect_small_rss() {
  [ -z "${rss_kib:-}" ] && { bad "no /usr/bin/time (GNU time, tools/install-deps.sh): peak RSS not checked"; return; }
  local floor
  /usr/bin/time -f '%M' -o "$W/rss-floor" env -i "$probe" --version >/dev/null 2>&1
  floor=$(tail -1 "$W/rss-floor")
  say "  peak RSS ${rss_kib} KiB; the program's floor (--version) ${floor} KiB"
  [ "$rss_kib" -le $((floor + 2048)) ] || bad "peak RSS ${rss_kib} KiB, more than 2 MiB over the ${floor} KiB floor: the file was read into memory"
}

# nccl_in_lib VARIANT: the stand-in's libnccl.so.2 as $W/lib/libnccl.so.2 (a copy, root-owned
# and 0755 like an installed library), and LD_LIBRARY_PATH pointing there.
nccl_in_lib() {
  cp -L "$standins/$1/libnccl.so.2" "$W/lib/libnccl.so.2" || { bad "no stand-in $1"; exit 1; }
  chmod 755 "$W/lib/libnccl.so.2"
  LDP=$W/lib
}
# good_driver: a working libcuda.so.1 beside the NCCL, so that no driver warning muddles --strict.
good_driver() {
  cp -L "$standins/cuda-550.54.15/libcuda.so.1" "$W/lib/libcuda.so.550.54.15"
  ln -sf libcuda.so.550.54.15 "$W/lib/libcuda.so.1"
}
# patch_machine FILE EM: overwrite e_machine (offset 18, 2 bytes little-endian).
patch_machine() {
  printf "$(printf '\\%03o\\%03o' $(($2 & 255)) $(($2 >> 8)))" |
    dd of="$1" bs=1 seek=18 count=2 conv=notrunc status=none
}
# The message a user reads for the NCCL of rank 0.
nccl_message() { jqr '.findings[] | select(.code == "nccl-unloadable" or .code == "nccl-missing") | .message' | head -1; }
show() { say "  $case_name: exit $rc in $secs s; $*"; }

lib_case() {  # lib_case STATUS CODE MESSAGE_SUBSTRING: the common assertions of a broken NCCL
  run_json
  expect_rc 1
  expect_bounded
  expect_status nccl "$1"
  expect_finding "$2" error "$3"
  show "$(nccl_message)"
}

# A --root tree with the usual library directories and no loader cache.
make_root() {
  R=$W/root
  mkdir -p "$R/usr/lib/x86_64-linux-gnu" "$R/etc" "$R/usr/local/lib/python3.11/dist-packages"
  chmod -R 755 "$R"
}

# torch_site DIR TORCH_VARIANT WHEEL_NCCL_VARIANT: a site-packages in DIR with torch 2.5.1+cu124
# (libtorch_cuda.so from the stand-in, DT_RPATH to the wheel) and the nvidia-nccl wheel.
torch_site() {
  site=$1
  mkdir -p "$site/torch/lib" "$site/nvidia/nccl/lib"
  printf "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\n" >"$site/torch/version.py"
  cp "$standins/$2/libtorch_cuda.so" "$site/torch/lib/"
  cp -L "$standins/$3/libnccl.so.2" "$site/nvidia/nccl/lib/libnccl.so.2"
  chmod -R a+rX "$site"
}
# The baseline, taken in this test under the same load: a healthy run (a good stand-in NCCL
# and driver). Hostile cases run in parallel on a busy machine, so their bound is --timeout + 2 s
# plus twice what a healthy run takes right now, not a fixed figure tuned on an idle machine.
nccl_in_lib nccl-2.21.5
good_driver
run_json
SLACK=$(awk -v s="$secs" 'BEGIN { printf "%.2f", 2 * s }')
say "  baseline: a healthy run took $secs s, so the bound is --timeout $T + 2 s + $SLACK s"
rm -f "$W/lib/libnccl.so.2" "$W/lib/libcuda.so.550.54.15" "$W/lib/libcuda.so.1" "$W/report.json"
LDP=""

case "$case_name" in

# ---- Libraries --------------------------------------------------------------------------------
nccl_random_bytes)
  head -c 65536 /dev/urandom >"$W/lib/libnccl.so.2"
  printf 'JUNK' | dd of="$W/lib/libnccl.so.2" bs=1 count=4 conv=notrunc status=none  # never \x7fELF
  LDP=$W/lib
  lib_case unloadable nccl-unloadable "not an ELF shared library"
  ;;

nccl_truncated)
  # The first 8 KiB of the real 218 MB NCCL: ELF header intact, everything else past the end.
  if [ -r "$REAL_NCCL" ]; then
    head -c 8192 "$REAL_NCCL" >"$W/lib/libnccl.so.2"
  else
    say "  ($REAL_NCCL absent: truncating a stand-in instead)"
    head -c 4096 "$standins/nccl-2.21.5/libnccl.so.2" >"$W/lib/libnccl.so.2"
  fi
  LDP=$W/lib
  lib_case unloadable nccl-unloadable "truncated"
  ;;

nccl_aarch64_root)
  # Under --root nothing else can stand in: the loader skips the aarch64 file and finds none.
  make_root
  cp -L "$standins/nccl-2.21.5/libnccl.so.2" "$R/usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5"
  ln -s libnccl.so.2.21.5 "$R/usr/lib/x86_64-linux-gnu/libnccl.so.2"
  patch_machine "$R/usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5" 183
  run_json --root "$R"
  expect_rc 1
  expect_bounded
  expect_status nccl unloadable
  expect_finding nccl-unloadable error "built for aarch64, this is x86_64"
  show "$(nccl_message)"
  ;;

nccl_aarch64_live)
  # Live, the loader passes over a file for another machine and goes on searching, as glibc does
  # ("No such file or directory" from dlopen). Where it finds no other NCCL, the probe says why;
  # where the machine has one (the loader cache), that one is what the process gets.
  nccl_in_lib nccl-2.21.5
  patch_machine "$W/lib/libnccl.so.2" 183
  run_json
  expect_bounded
  status=$(jqr '.ranks[0].nccl.status')
  path=$(jqr '.ranks[0].nccl.path')
  if [ "$status" = unloadable ]; then
    expect_rc 1
    expect_finding nccl-unloadable error "built for aarch64, this is x86_64"
  else
    [ "$path" != "$W/lib/libnccl.so.2" ] || bad "the aarch64 library was accepted"
    [ "$status" = ok ] || bad "status $status with a working NCCL elsewhere ($path)"
    say "  (a working NCCL at $path stands in, as it would for the real loader)"
  fi
  show "nccl $status at $path; $(nccl_message)"
  ;;

nccl_no_getversion)
  nccl_in_lib nccl-no-getversion
  lib_case unloadable nccl-unloadable "does not export ncclGetVersion"
  ;;

nccl_ctor_crash)
  nccl_in_lib nccl-ctor-crash
  lib_case unloadable nccl-unloadable "crashed with SIGSEGV"
  ;;

nccl_ctor_hang)
  nccl_in_lib nccl-ctor-hang
  lib_case unloadable nccl-unloadable "did not return within"
  ;;

nccl_getversion_hang)
  nccl_in_lib nccl-getversion-hang
  lib_case unloadable nccl-unloadable "did not return within"
  ;;

nccl_symlink_loop)
  ln -s libnccl.so.2.x "$W/lib/libnccl.so.2"
  ln -s libnccl.so.2 "$W/lib/libnccl.so.2.x"
  LDP=$W/lib
  lib_case unloadable nccl-unloadable "too many levels of symbolic links"
  ;;

nccl_directory)
  mkdir -p "$W/lib/libnccl.so.2"
  LDP=$W/lib
  lib_case unloadable nccl-unloadable "is a directory"
  ;;

nccl_huge_sparse)
  # 2 GB of holes named libnccl.so.2: refused from its first bytes, never read whole.
  truncate -s 2G "$W/lib/libnccl.so.2"
  LDP=$W/lib
  lib_case unloadable nccl-unloadable "not an ELF shared library"
  ;;

nccl_non_utf8_path)
  # A library directory whose name is not UTF-8 (a Latin-1 byte): the record and the JSON report
  # carry U+FFFD for it (the JSON library's default is to throw: type_error 316, exit 134).
  d=$(printf '%s/lib-\377' "$W")
  mkdir -p "$d"
  cp -L "$standins/nccl-2.21.5/libnccl.so.2" "$d/libnccl.so.2"
  LDP=$d
  run_json
  expect_rc 0
  expect_bounded
  expect_status nccl ok
  expect_json '.ranks[0].nccl.version == "2.21.5"' "NCCL version not read" '.ranks[0].nccl'
  show "nccl $(jqr '.ranks[0].nccl.status') $(jqr '.ranks[0].nccl.version') at $(jqr '.ranks[0].nccl.path')"
  ;;

cuda_getversion_hang)
  cp -L "$standins/cuda-hang/libcuda.so.1" "$W/lib/libcuda.so.1"
  nccl_in_lib nccl-2.21.5
  run_json --require-gpu
  expect_rc 1
  expect_bounded
  expect_status cuda_driver error
  expect_finding cuda-driver-unusable error "did not return within"
  # Without --require-gpu a node without a usable driver is a warning, as cuda-driver-missing.
  run_json
  expect_rc 0
  expect_bounded
  expect_finding cuda-driver-unusable warning "did not return within"
  show "$(jqr '.findings[] | select(.code == "cuda-driver-unusable") | .message')"
  ;;

torch_version_empty|torch_version_binary|torch_version_huge)
  site=$W/site-packages
  mkdir -p "$site/torch"
  case "$case_name" in
    torch_version_empty) : >"$site/torch/version.py"; words="no __version__ assignment" ;;
    torch_version_binary) head -c 4096 /dev/urandom >"$site/torch/version.py"
                          printf '\0' >>"$site/torch/version.py"; words="not a text file" ;;
    torch_version_huge) truncate -s 1G "$site/torch/version.py"; words="larger than 64 KiB" ;;
  esac
  nccl_in_lib nccl-2.21.5
  good_driver
  run_json --site-packages "$site"
  expect_rc 0
  expect_bounded
  expect_status torch error
  expect_finding torch-unreadable warning "$words"
  run_json --strict --site-packages "$site"
  expect_rc 1
  show "$(jqr '.findings[] | select(.code == "torch-unreadable") | .message')"
  ;;

site_packages_flood)
  # A site-packages with 30,000 entries, symlink loops (a self loop, a two-link cycle, a link to
  # its own parent), and torch/ reached through a chain of links: the scan stays bounded.
  site=$W/site-packages
  mkdir -p "$site/real_torch" "$site/nvidia/nccl/lib"
  printf "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\n" >"$site/real_torch/version.py"
  ln -s real_torch "$site/torch"
  ln -s loop "$site/loop"
  ln -s cycle_b "$site/cycle_a"
  ln -s cycle_a "$site/cycle_b"
  ln -s .. "$site/up"
  ln -s "$site" "$site/nvidia/nccl/lib/self"
  ln -s libnccl.so.2 "$site/nvidia/nccl/lib/libnccl.so.2.loop"
  ln -s libnccl.so.2.loop "$site/nvidia/nccl/lib/libnccl.so.2"
  (cd "$site" && seq -f 'pkg_%g.dist-info' 1 15000 | xargs mkdir &&
     seq -f 'mod_%g.py' 1 15000 | xargs touch) || { bad "cannot make the tree"; exit 1; }
  # 2,000 more libnccl.so.N that each point at themselves.
  (cd "$site/nvidia/nccl/lib" && seq -f 'libnccl.so.%g' 3 2000 | xargs ln -s -t .)
  nccl_in_lib nccl-2.21.5
  # Alone, the probe runs under the --timeout deadline; the candidate scan of
  # this tree takes seconds on a loaded machine, so give it room: the point is that it ends.
  T=15 BOUND=17
  run_json --site-packages "$site"
  expect_bounded
  [ "$rc" -le 1 ] || bad "exit $rc"
  expect_status torch ok
  expect_json '.ranks[0].torch.version == "2.5.1+cu124"' "torch version not read through the links" '.ranks[0].torch'
  show "torch $(jqr '.ranks[0].torch.version'), $(jqr '.ranks[0].nccl_candidates | length') NCCL candidates"
  ;;

# ---- Input files: baselines (--baseline), saved reports (compare), traces (collectives) ------
baseline_*|compare_*|collectives_*)
  kind=${case_name%%_*}
  fault=${case_name#*_}
  f=$W/input.json
  case "$kind:$fault" in
    baseline:malformed) printf 'schema: denpex.baseline.v1\nnccl: 2.21.5\n' >"$f"; words="not valid JSON" ;;
    baseline:truncated) printf '{"schema": "denpex.baseline.v1", "nccl": {"version": "2.2' >"$f"; words="not valid JSON" ;;
    baseline:schema) printf '{"schema": "denpex.baseline.v2", "nccl": {"version": "2.21.5"}}\n' >"$f"; words="schema .* not supported" ;;
    baseline:deep) head -c 100000 /dev/zero | tr '\0' '[' >"$f"; words="not valid JSON|nested" ;;
    baseline:deep_valid)
      { printf '{"schema": '; head -c 100000 /dev/zero | tr '\0' '['; head -c 100000 /dev/zero | tr '\0' ']'; printf '}'; } >"$f"
      words="nested|schema" ;;
    baseline:huge) truncate -s 2G "$f"; words="larger than" ;;
    compare:malformed) printf 'rank 0 on node1: NCCL 2.21.5\n' >"$f"; words="not valid JSON" ;;
    compare:truncated) printf '{"rank": 0, "host": "node1", "pid": 12, "nccl": {"status": "ok", "vers' >"$f"; words="not valid JSON" ;;
    compare:schema) printf '{"schema": "denpex.report.v2", "verdict": "pass", "ranks": []}\n' >"$f"; words="schema .* not one this version reads" ;;
    compare:deep) head -c 100000 /dev/zero | tr '\0' '[' >"$f"; words="nested more than 64 levels" ;;
    compare:deep_valid)
      { printf '{"schema": '; head -c 100000 /dev/zero | tr '\0' '['; head -c 100000 /dev/zero | tr '\0' ']'; printf '}'; } >"$f"
      words="nested more than 64 levels" ;;
    compare:huge) truncate -s 2G "$f"; words="larger than" ;;
    collectives:malformed) head -c 20000 /dev/urandom | tr -d '\n' >"$f"; words="binary data|no NCCL collective calls|longer than" ;;
    collectives:truncated)
      printf '{"schema":"denpex.trace.v1","host":"node1","pid":7,"rank":0}\n{"ev":"call","comm":"00000000000000aa","rank":0,"nranks":2,"seq":0,"op":"AllRed' >"$f"
      words="no NCCL collective calls" ;;
    collectives:schema)
      printf '{"schema":"denpex.trace.v3","host":"node1","pid":7,"rank":0}\n{"ev":"call","comm":"aa","rank":0,"nranks":2,"seq":0,"op":"AllReduce","count":1,"dtype":7,"redop":0}\n' >"$f"
      words="not a denpex.trace.v1 or denpex.trace.v2 header" ;;
    collectives:v2_short)
      # A v2 header followed by JSON lines (or a ring file cut by a full disk before its control block).
      printf '{"schema":"denpex.trace.v2","host":"node1","pid":7,"rank":0,"slots":1024}\n{"ev":"call","comm":"aa"}\n' >"$f"
      words="ends before its control block" ;;
    collectives:v2_forged)
      # A v2 header and 8 KiB of zeros: no control block written by the recorder.
      { printf '{"schema":"denpex.trace.v2","host":"node1","pid":7,"rank":0,"slots":1024}\n'; head -c 9000 /dev/zero; } >"$f"
      words="control block does not match its header" ;;
    collectives:deep)
      { printf '{"schema":"denpex.trace.v1","host":"node1","pid":7,"rank":0}\n'; head -c 100000 /dev/zero | tr '\0' '['; printf '\n'; } >"$f"
      words="no NCCL collective calls" ;;
    collectives:huge) truncate -s 2G "$f"; words="binary data \\(NUL bytes|longer than" ;;
    *) say "unknown case $case_name"; exit 1 ;;
  esac
  case "$kind" in
    baseline) args=(--timeout "$T" --baseline "$f") ;;
    compare) args=(--timeout "$T" compare "$f") ;;
    collectives) args=(collectives "$f") ;;
  esac
  if [ "$fault" = huge ]; then
    measured "${args[@]}"
  else
    run "${args[@]}"
  fi
  expect_rc 2
  expect_bounded
  expect_one_line_naming "$f" "$words"
  [ "$fault" = huge ] && expect_small_rss
  show ""
  ;;

# ---- Root safety ------------------------------------------------------------------------------
root_untrusted_dir)
  # A world-writable directory on LD_LIBRARY_PATH holding an NCCL and a driver whose constructors
  # would write the marker: as root they are read, never loaded, and their versions still count.
  [ "$(id -u)" -eq 0 ] || skip "needs root (the probe only distrusts files when it runs as root)"
  # 0777 without the sticky bit: any user can replace these files (a sticky directory such as
  # /tmp is another case, root_sticky_dir).
  mkdir -p "$W/ww"
  cp -L "$standins/hostile-nccl-marker/libnccl.so.2" "$W/ww/libnccl.so.2.26.2"
  ln -s libnccl.so.2.26.2 "$W/ww/libnccl.so.2"
  cp -L "$standins/hostile-cuda-marker/libcuda.so.1" "$W/ww/libcuda.so.550.54.15"
  ln -s libcuda.so.550.54.15 "$W/ww/libcuda.so.1"
  chmod 755 "$W/ww"/lib*.so.*.*
  chmod 0777 "$W/ww"
  LDP=$W/ww
  run_json
  expect_bounded
  [ -e "$W/marker" ] && bad "the marker exists: a library in a world-writable directory was loaded as root"
  expect_rc 0
  expect_status nccl not-loaded
  expect_json '.ranks[0].nccl.version == "2.26.2"' "NCCL version not read statically" '.ranks[0].nccl'
  expect_finding probe-untrusted-library warning "writable by every user"
  expect_json '.ranks[0].cuda_driver.library_version == "550.54.15"' "driver version not read from its name" '.ranks[0].cuda_driver'
  # The version still counts: a baseline pinning another NCCL rejects.
  printf '{"schema": "denpex.baseline.v1", "nccl": {"version": "2.21.5"}}\n' >"$W/baseline.json"
  run_json --baseline "$W/baseline.json"
  [ -e "$W/marker" ] && bad "the marker exists after the baseline run"
  expect_rc 1
  expect_finding nccl-version-mismatch error "2.26.2"
  show "marker absent; $(jqr '.findings[] | select(.code == "probe-untrusted-library") | .message')"
  ;;

root_foreign_owner)
  # A file owned by another user, in a root-owned 0755 directory: also never loaded as root.
  [ "$(id -u)" -eq 0 ] || skip "needs root"
  nccl_in_lib hostile-nccl-marker
  chown 65534:65534 "$W/lib/libnccl.so.2" || skip "cannot chown to uid 65534"
  run_json
  expect_bounded
  [ -e "$W/marker" ] && bad "the marker exists: a library owned by uid 65534 was loaded as root"
  expect_rc 0
  expect_status nccl not-loaded
  expect_json '.ranks[0].nccl.version == "2.26.2"' "NCCL version not read statically" '.ranks[0].nccl'
  expect_finding probe-untrusted-library warning "owned by uid 65534"
  show "marker absent; $(jqr '.findings[] | select(.code == "probe-untrusted-library") | .message')"
  ;;

root_tree_never_loaded)
  # Under --root nothing in the tree is loaded, whoever runs the probe and whatever the tree holds.
  make_root
  cp -L "$standins/hostile-nccl-marker/libnccl.so.2" "$R/usr/lib/x86_64-linux-gnu/libnccl.so.2.26.2"
  ln -s libnccl.so.2.26.2 "$R/usr/lib/x86_64-linux-gnu/libnccl.so.2"
  cp -L "$standins/hostile-cuda-marker/libcuda.so.1" "$R/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15"
  ln -s libcuda.so.550.54.15 "$R/usr/lib/x86_64-linux-gnu/libcuda.so.1"
  run_json --root "$R"
  expect_bounded
  [ -e "$W/marker" ] && bad "the marker exists: --root loaded a library from the tree"
  expect_rc 0
  expect_status nccl not-loaded
  expect_json '.ranks[0].nccl.version == "2.26.2"' "NCCL version not read statically" '.ranks[0].nccl'
  # Nothing is loaded under --root, so where the tree lies on the host (under /tmp, in
  # the .under_tmp variant) is no trust question.
  expect_json '[.findings[] | select(.code == "probe-untrusted-library")] | length == 0' \
    "probe-untrusted-library for a tree that is never loaded" '.findings[]'
  # The only warning is the driver's minor version compatibility (the stand-in NCCL is +cuda12.8,
  # driver 550.54.15 supports 12.4): nothing about trust or loading.
  expect_json '[.findings[].code] == ["cuda-driver-minor-compat"]' \
    "findings other than cuda-driver-minor-compat for a tree that is never loaded" '.findings[]'
  # Hostile libraries in the tree are read, not run: a constructor that crashes or hangs does not matter.
  cp -L "$standins/nccl-ctor-hang/libnccl.so.2" "$R/usr/lib/x86_64-linux-gnu/libnccl.so.2.26.2"
  run_json --root "$R"
  expect_bounded
  expect_rc 0
  expect_status nccl not-loaded
  show "marker absent; nccl $(jqr '.ranks[0].nccl.status') $(jqr '.ranks[0].nccl.version')"
  ;;

root_sticky_dir)
  # A directory writable by every user but sticky (like /tmp, /var/tmp): another user
  # can add files there but cannot rename or remove root's. Root-owned libraries in it are
  # loaded as root; a file another user owns there is still not.
  [ "$(id -u)" -eq 0 ] || skip "needs root"
  mkdir -p "$W/sticky"
  cp -L "$standins/nccl-2.21.5/libnccl.so.2" "$W/sticky/libnccl.so.2.21.5"
  ln -s libnccl.so.2.21.5 "$W/sticky/libnccl.so.2"
  chmod 755 "$W/sticky/libnccl.so.2.21.5"
  chmod 1777 "$W/sticky"
  LDP=$W/sticky
  run_json
  expect_bounded
  expect_rc 0
  expect_status nccl ok
  expect_json '.ranks[0].nccl.method == "dlopen" and .ranks[0].nccl.version == "2.21.5"' \
    "the NCCL in a sticky directory was not loaded" '.ranks[0].nccl'
  expect_json '[.findings[] | select(.code == "probe-untrusted-library")] | length == 0' \
    "a root-owned library in a sticky directory was called untrusted" '.findings[]'
  chown 65534:65534 "$W/sticky/libnccl.so.2.21.5" || skip "cannot chown to uid 65534"
  run_json
  expect_bounded
  expect_status nccl not-loaded
  expect_finding probe-untrusted-library warning "owned by uid 65534"
  show "$(jqr '.findings[] | select(.code == "probe-untrusted-library") | .message')"
  ;;

root_needed_untrusted)
  # As root, what a trusted NCCL itself needs (DT_NEEDED) is checked too. This NCCL
  # sits in a root-owned 0755 directory; the libdenpex-dep.so.1 it needs is found in a directory
  # every user can write, and its constructor would write the marker.
  [ "$(id -u)" -eq 0 ] || skip "needs root"
  nccl_in_lib nccl-needs-dep
  mkdir -p "$W/ww"
  cp -L "$standins/hostile-dep/libdenpex-dep.so.1" "$W/ww/libdenpex-dep.so.1"
  chmod 755 "$W/ww/libdenpex-dep.so.1"
  chmod 0777 "$W/ww"
  LDP=$W/lib:$W/ww
  run_json
  expect_bounded
  [ -e "$W/marker" ] && bad "the marker exists: a library needed by the NCCL was loaded from a world-writable directory as root"
  expect_rc 0
  expect_status nccl not-loaded
  expect_json '.ranks[0].nccl.version == "2.21.5"' "NCCL version not read statically" '.ranks[0].nccl'
  expect_finding probe-untrusted-library warning "needs $W/ww/libdenpex-dep.so.1"
  # The same helper in a root-owned directory: the NCCL is loaded, and the helper with it.
  chmod 0755 "$W/ww"
  run_json
  expect_bounded
  expect_status nccl ok
  [ -e "$W/marker" ] || bad "the marker is absent: the trusted NCCL and its helper were not loaded"
  show "$(jqr '.findings[] | select(.code == "probe-untrusted-library") | .message')"
  ;;

# ---- The loader ------------------------------------------------------------------------------
preload_by_soname)
  # Jobs preload allocators by soname (LD_PRELOAD=libjemalloc.so.2). Resolving such an entry
  # must not recurse on itself (which ends in SIGSEGV, exit 139).
  nccl_in_lib nccl-2.21.5
  good_driver
  # verify_asan_link_order=0: see watchdog_alone (the sanitizer build).
  EXTRA_ENV=(LD_PRELOAD=libm.so.6 ASAN_OPTIONS=verify_asan_link_order=0)
  run_json
  expect_rc 0
  expect_bounded
  expect_status nccl ok
  # A stand-in NCCL preloaded by soname (found on LD_LIBRARY_PATH) beats PyTorch's DT_RPATH to
  # its wheel NCCL, exactly as in ld.so: a preloaded object answers every later request for
  # its soname.
  torch_site "$W/site" torch-dyn nccl-2.27.3
  EXTRA_ENV=(LD_PRELOAD=libnccl.so.2 ASAN_OPTIONS=verify_asan_link_order=0)
  run_json --site-packages "$W/site"
  EXTRA_ENV=()
  expect_bounded
  expect_json '.ranks[0].nccl.origin == "LD_PRELOAD" and .ranks[0].nccl.version == "2.21.5"' \
    "the preloaded NCCL did not win over torch's RPATH" '.ranks[0].nccl'
  expect_json '.ranks[0].torch.nccl.version == "2.21.5" and .ranks[0].torch.bundled_nccl.version == "2.27.3"' \
    "torch.nccl is not the preloaded one" '.ranks[0].torch'
  # Without the preload the wheel wins (its RPATH comes before LD_LIBRARY_PATH).
  run_json --site-packages "$W/site"
  expect_json '.ranks[0].nccl.version == "2.27.3" and .ranks[0].nccl.origin == "torch-rpath"' \
    "without LD_PRELOAD the wheel NCCL should win" '.ranks[0].nccl'
  show "LD_PRELOAD=libnccl.so.2: nccl $(jqr '.ranks[0].nccl.version') via $(jqr '.ranks[0].nccl.origin')"
  ;;

loader_check_agree|loader_check_hwcaps|loader_check_legacy_tls)
  # The probe asks the real loader for libnccl.so.2 in a child and compares with its emulation.
  # glibc (2.33+) searches glibc-hwcaps/x86-64-v4, v3, v2 below every LD_LIBRARY_PATH directory
  # first (the emulation does too: they agree on a copy there); glibc 2.36 then searches the
  # legacy tls/ and platform subdirectories, which the emulation does not model: a copy in tls/
  # is one it gets wrong, and says so.
  # As root the check is not made (the loader might map a file no one trust-checked), so the
  # probe runs as nobody here.
  nccl_in_lib nccl-2.21.5
  chmod 0777 "$W"   # the report is written by nobody
  case $case_name in
    loader_check_hwcaps) sub=glibc-hwcaps/x86-64-v2 ;;
    loader_check_legacy_tls) sub=tls ;;
    *) sub= ;;
  esac
  if [ -n "$sub" ]; then
    mkdir -p "$W/lib/$sub"
    cp -L "$standins/nccl-2.27.3/libnccl.so.2" "$W/lib/$sub/libnccl.so.2"
    chmod -R a+rX "$W/lib"
  fi
  as=()
  if [ "$(id -u)" -eq 0 ]; then
    command -v setpriv >/dev/null || skip "setpriv is needed to run the probe as nobody"
    as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  fi
  t0=$(date +%s%N)
  timeout -k 2 $((BOUND + 20)) "${as[@]}" env -i HOME="$W/home" PATH="$W/emptybin" LD_LIBRARY_PATH="$LDP" \
    "$probe" --timeout "$T" --json "$W/report.json" >"$W/out" 2>"$W/err"
  rc=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
  expect_bounded
  expect_json '.ranks[0].loader_checks[0].name == "libnccl.so.2"' "no loader check made" '.ranks[0]'
  case $case_name in
    loader_check_agree|loader_check_hwcaps)
      want=$W/lib/libnccl.so.2
      if [ "$case_name" = loader_check_hwcaps ]; then
        grep -q 'x86-64-v2 (supported' <(/lib64/ld-linux-x86-64.so.2 --help 2>/dev/null) ||
          skip "this loader does not list glibc-hwcaps x86-64-v2 as supported"
        want=$W/lib/glibc-hwcaps/x86-64-v2/libnccl.so.2
        # v3 and v4 are searched first when supported; nothing is there: v2 still wins.
      fi
      expect_rc 0
      expect_json ".ranks[0].loader_checks[0].loaded == \"$want\" and .ranks[0].loader_checks[0].emulated == .ranks[0].loader_checks[0].loaded" \
        "the loader and the emulation should agree on $want" '.ranks[0].loader_checks'
      expect_json '[.findings[] | select(.code == "probe-loader-disagreement")] | length == 0' \
        "a disagreement where there is none" '.findings[]'
      ;;
    *)
      grep -q '^  tls (supported' <(/lib64/ld-linux-x86-64.so.2 --help 2>/dev/null) ||
        skip "this loader does not search legacy tls/ subdirectories (glibc 2.37+)"
      expect_rc 0
      expect_finding probe-loader-disagreement warning "gets $W/lib/tls/libnccl.so.2 from the dynamic loader for libnccl.so.2"
      expect_finding probe-loader-disagreement warning "emulation named $W/lib/libnccl.so.2"
      ;;
  esac
  show "$(jqr '.ranks[0].loader_checks[0] | "emulated \(.emulated), loaded \(.loaded)"')"
  ;;

abi_unreadable)
  # A wheel NCCL whose section headers were stripped (the loader needs none, so it loads and
  # works): its dynamic symbol table cannot be located. Counting every import as missing would
  # be a false nccl-abi-mismatch error; the check says it could not be made.
  torch_site "$W/site" torch-dyn-reg nccl-2.27.3
  LDP=$W/lib
  # Intact, this NCCL exports every nccl* symbol this torch imports: no ABI finding at all.
  run_json --site-packages "$W/site"
  expect_json '[.findings[] | select(.code | startswith("nccl-abi"))] | length == 0' \
    "the intact wheel NCCL should pass the ABI check" '.findings[]'
  f=$W/site/nvidia/nccl/lib/libnccl.so.2
  # e_shoff (offset 40, 8 bytes), e_shnum (60, 2) and e_shstrndx (62, 2) to zero.
  dd if=/dev/zero of="$f" bs=1 seek=40 count=8 conv=notrunc status=none
  dd if=/dev/zero of="$f" bs=1 seek=60 count=4 conv=notrunc status=none
  run_json --site-packages "$W/site"
  expect_bounded
  expect_rc 0
  expect_status nccl ok
  expect_json '[.findings[] | select(.code == "nccl-abi-mismatch")] | length == 0' \
    "an unreadable symbol table was judged an ABI mismatch" '.findings[]'
  expect_finding nccl-abi-unchecked warning "it has no section headers"
  expect_json '.ranks[0].abi[0].error != null and (.ranks[0].abi[0].missing | length) == 0' \
    "the record's abi entry should carry the error, not missing symbols" '.ranks[0].abi'
  show "$(jqr '.findings[] | select(.code == "nccl-abi-unchecked") | .message')"
  ;;

# ---- Special files and hung file systems -----------------------------------------------------
fifo_ld_cache_root|fifo_nccl_root|fifo_torch_version_root|fifo_nccl_live)
  # A FIFO where a file is expected: opening it for reading blocks until a writer comes, which
  # would hold the probe (and validate-image) forever. It is opened non-blocking and refused.
  make_root
  lib=$R/usr/lib/x86_64-linux-gnu
  cp -L "$standins/nccl-2.21.5/libnccl.so.2" "$lib/libnccl.so.2.21.5"
  ln -s libnccl.so.2.21.5 "$lib/libnccl.so.2"
  site=$R/usr/local/lib/python3.11/dist-packages
  mkdir -p "$site/torch"
  printf "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\n" >"$site/torch/version.py"
  args=(--root "$R")
  case "$case_name" in
    fifo_ld_cache_root)
      mkfifo "$R/etc/ld.so.cache"
      run_json "${args[@]}"
      expect_rc 0
      expect_status nccl not-loaded
      expect_finding probe-error warning "/etc/ld.so.cache: is a FIFO (named pipe), not a regular file"
      msg=$(jqr '.findings[] | select(.code == "probe-error") | .message') ;;
    fifo_nccl_root)
      rm "$lib/libnccl.so.2"
      mkfifo "$lib/libnccl.so.2"
      run_json "${args[@]}"
      expect_rc 1
      expect_status nccl unloadable
      expect_finding nccl-unloadable error "/usr/lib/x86_64-linux-gnu/libnccl.so.2: is a FIFO (named pipe), not a regular file"
      msg=$(nccl_message) ;;
    fifo_torch_version_root)
      rm "$site/torch/version.py"
      mkfifo "$site/torch/version.py"
      run_json "${args[@]}"
      expect_rc 0
      expect_status torch error
      expect_finding torch-unreadable warning "version.py cannot be read: is a FIFO (named pipe), not a regular file"
      msg=$(jqr '.findings[] | select(.code == "torch-unreadable") | .message') ;;
    fifo_nccl_live)
      mkfifo "$W/lib/libnccl.so.2"
      LDP=$W/lib
      run_json
      expect_rc 1
      expect_status nccl unloadable
      expect_finding nccl-unloadable error "$W/lib/libnccl.so.2: is a FIFO (named pipe), not a regular file"
      msg=$(nccl_message) ;;
  esac
  expect_bounded
  show "$msg"
  ;;

watchdog_alone|watchdog_root)
  # A file system on which opening torch/version.py never returns (the hang-open fault
  # injector, preloaded into the probe). Alone and under --root the run ends at --timeout
  # like an MPI rank does: rank-timeout naming the step, exit 1, the report still written.
  site=$W/site-packages
  mkdir -p "$site/torch"
  printf "__version__ = '2.5.1+cu124'\n" >"$site/torch/version.py"
  nccl_in_lib nccl-2.21.5
  # verify_asan_link_order=0: in the sanitizer build (tests/sanitize.sh) a preload ahead of the
  # ASan runtime is otherwise refused; ignored by the ordinary build.
  EXTRA_ENV=(LD_PRELOAD="$standins/hang-open/libdenpex-hang-open.so" DENPEX_HANG_OPEN=torch/version.py
             ASAN_OPTIONS=verify_asan_link_order=0)
  if [ "$case_name" = watchdog_root ]; then
    make_root
    mkdir -p "$R/usr/local/lib/python3.11/dist-packages/torch"
    cp "$site/torch/version.py" "$R/usr/local/lib/python3.11/dist-packages/torch/version.py"
    run_json --root "$R"
  else
    run_json --site-packages "$site"
  fi
  EXTRA_ENV=()
  expect_rc 1
  expect_bounded
  expect_finding rank-timeout error "did not finish within --timeout $T.0 s"
  expect_finding rank-timeout error "stuck in: PyTorch"
  grep -q "did not finish within --timeout" "$W/err" || bad "no line on stderr says the probe timed out"
  show "$(jqr '.findings[] | select(.code == "rank-timeout") | .message')"
  ;;

# ---- Outputs and standard output --------------------------------------------------------------
# Outputs (--json, --html, --prometheus, --rank-report, --write-baseline) are written into a
# scratch tree $W/t; every case lists that tree before and after (name, type, size, mode, link
# target) and asserts that nothing but the named output changed.
output_*|stdout_full|explain_stdout_full|input_symlink_loop|input_dir_entries|pickle_stdin|record_rank_null|ras_keys)
  fixtures=$(cd "$(dirname "$0")/../fixtures" && pwd)
  ras=$fixtures/evidence/ras-text/status.json
  t=$W/t
  mkdir -p "$t"
  printf 'secret\n' >"$t/victim"
  tree() { find "$t" -printf '%p %y %s %m %l\n' | sort; }
  # run_io STDIN STDOUT ARGS...: run with standard input and output of our choosing.
  run_io() {
    local in=$1 out=$2
    shift 2
    local t0
    t0=$(date +%s%N)
    timeout -k 2 $((BOUND + 20)) env -i HOME="$W/home" PATH="$W/emptybin" "$probe" "$@" <"$in" >"$out" 2>"$W/err"
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
  }
  expect_tree_unchanged() {  # expect_tree_unchanged BEFORE_FILE [NAME_THAT_MAY_CHANGE]
    local after
    after=$(tree)
    if [ -n "${2:-}" ]; then
      diff <(grep -v "^$2 " "$1") <(printf '%s\n' "$after" | grep -v "^$2 ") >/dev/null ||
        { bad "the scratch tree changed beyond $2"; diff "$1" <(printf '%s\n' "$after") | head -10 | sed 's/^/  /'; }
    else
      diff "$1" <(printf '%s\n' "$after") >/dev/null ||
        { bad "the scratch tree changed"; diff "$1" <(printf '%s\n' "$after") | head -10 | sed 's/^/  /'; }
    fi
  }
  tree >"$W/before"
  case $case_name in
    output_dev_null)
      # A device node of the scratch tree's own (c 1 3, what /dev/null is), so that a writer that
      # still replaced devices would replace it, not the machine's /dev/null.
      [ "$(id -u)" -eq 0 ] || skip "making a device node needs root"
      mknod "$t/null" c 1 3 && chmod 666 "$t/null" || skip "mknod failed"
      : >"$t/null" 2>/dev/null || skip "device nodes cannot be opened on this file system (nodev)"
      tree >"$W/before"
      run_io /dev/null "$W/out" diagnose "$ras" --json "$t/null" -q
      expect_rc 1
      [ "$(stat -c %F "$t/null")" = "character special file" ] || bad "$t/null is now a $(stat -c %F "$t/null")"
      expect_tree_unchanged "$W/before"
      [ -s "$W/err" ] && bad "stderr is not empty: $(head -c 300 "$W/err")"
      # Only now the machine's own /dev/null: the scratch node proved it is written through.
      if [ "$fail" -eq 0 ]; then
        run_io /dev/null "$W/out" diagnose "$ras" --json /dev/null -q
        expect_rc 1
        [ "$(stat -c %F /dev/null)" = "character special file" ] || bad "/dev/null is now a $(stat -c %F /dev/null)"
      fi
      show "the device node is still a $(stat -c %F "$t/null")" ;;
    output_symlink)
      ln -s victim "$t/report.json"
      ln -s victim "$t/metrics.prom"
      ln -s victim "$t/rank-0.json"
      tree >"$W/before"
      run_io /dev/null "$W/out" diagnose "$ras" --json "$t/report.json" -q
      expect_rc 2
      expect_one_line_naming "$t/report.json" "--json .*is a symbolic link \(to victim\).*remove the link"
      # The gate's outputs: --prometheus and --rank-report (the per-rank writer, no replace).
      run_io /dev/null "$W/out" --timeout "$T" --prometheus "$t/metrics.prom" -q
      expect_rc 2
      expect_one_line_naming "$t/metrics.prom" "--prometheus .*is a symbolic link"
      run_io /dev/null "$W/out" --timeout "$T" --rank-report "$t/rank-%r.json" -q
      grep -qE -- "--rank-report .*rank-0.json: is a symbolic link" "$W/err" ||
        bad "--rank-report through a link not refused: $(head -c 300 "$W/err")"
      [ "$(cat "$t/victim")" = secret ] || bad "the link's target was written"
      expect_tree_unchanged "$W/before"
      show "$(head -1 "$W/err")" ;;
    output_fifo)
      mkfifo "$t/fifo"
      tree >"$W/before"
      run_io /dev/null "$W/out" diagnose "$ras" --json "$t/fifo" -q
      expect_rc 2
      expect_bounded
      expect_one_line_naming "$t/fifo" "is a FIFO with no reader"
      # With a reader: written through, the FIFO stays one.
      timeout 20 cat "$t/fifo" >"$W/from-fifo" &
      reader=$!
      sleep 0.3
      run_io /dev/null "$W/out" diagnose "$ras" --json "$t/fifo" -q
      wait "$reader"
      expect_rc 1
      jq -e '.verdict' "$W/from-fifo" >/dev/null 2>&1 || bad "the reader did not get the JSON report"
      [ -p "$t/fifo" ] || bad "$t/fifo is no longer a FIFO"
      expect_tree_unchanged "$W/before"
      show "no reader: $(head -c 200 "$W/err")" ;;
    output_dir)
      mkdir -p "$t/reports"
      tree >"$W/before"
      run_io /dev/null "$W/out" diagnose "$ras" --json "$t/reports" -q
      expect_rc 2
      expect_one_line_naming "$t/reports" "--json .*is a directory: not written"
      expect_tree_unchanged "$W/before"
      # A regular file is replaced whole, keeping its mode; the standard streams' names are
      # written through the descriptor the shell opened (> file).
      printf 'old\n' >"$t/r.json"
      chmod 600 "$t/r.json"
      tree >"$W/before"
      run_io /dev/null "$W/out" diagnose "$ras" --json "$t/r.json" -q
      expect_rc 1
      [ "$(stat -c %a "$t/r.json")" = 600 ] || bad "the replaced file's mode is $(stat -c %a "$t/r.json"), not 600"
      jq -e '.verdict' "$t/r.json" >/dev/null || bad "$t/r.json is not the report"
      expect_tree_unchanged "$W/before" "$t/r.json"
      run_io /dev/null "$t/stdout.json" diagnose "$ras" --json /dev/stdout -q
      expect_rc 1
      jq -e '.verdict' "$t/stdout.json" >/dev/null || bad "--json /dev/stdout did not reach the file the shell opened"
      show "$(head -c 200 "$W/err" | head -1)" ;;
    stdout_full)
      [ -w /dev/full ] || skip "no /dev/full"
      for args in "diagnose $ras" "diagnose $ras --json - -q" "collectives $fixtures/evidence/ras-text" "compare $fixtures/compare/rank_ok.json"; do
        mode=${args%% *}
        # shellcheck disable=SC2086
        run_io /dev/null /dev/full $args
        expect_rc 2
        expect_one_line_naming "denpex-probe $mode: cannot write to standard output: No space left on device" "^denpex-probe $mode: cannot write"
      done
      # --json - with the human text on stderr: stderr full, nothing can be said, exit 2.
      timeout 20 env -i "$probe" diagnose "$ras" --json - >/dev/null 2>/dev/full
      rc=$?
      expect_rc 2
      run_io /dev/null /dev/full --version
      expect_rc 2
      grep -q "cannot write to standard output: No space left on device" "$W/err" || bad "--version: no line"
      expect_tree_unchanged "$W/before"
      show "$(head -1 "$W/err")" ;;
    explain_stdout_full)
      [ -w /dev/full ] || skip "no /dev/full"
      run_io /dev/null /dev/full explain nccl.init
      expect_rc 2
      expect_one_line_naming "denpex-probe explain: cannot write to standard output: No space left on device" "."
      run_io /dev/null /dev/full explain nccl.init --json
      expect_rc 2
      expect_one_line_naming "denpex-probe explain: cannot write to standard output: No space left on device" "."
      expect_tree_unchanged "$W/before"
      show "$(head -1 "$W/err")" ;;
    input_symlink_loop)
      ln -s loop-b "$t/loop-a"
      ln -s loop-a "$t/loop-b"
      tree >"$W/before"
      for args in "diagnose" "collectives" "compare" "--timeout $T --baseline"; do
        # shellcheck disable=SC2086
        run_io /dev/null "$W/out" $args "$t/loop-a"
        expect_rc 2
        expect_one_line_naming "$t/loop-a" "too many levels of symbolic links"
        grep -qi "no such file" "$W/err" && bad "$args: says 'no such file' for a link loop"
      done
      expect_tree_unchanged "$W/before"
      show "$(head -1 "$W/err")" ;;
    input_dir_entries)
      # A folder of logs holding a FIFO (which would block a reader), a dangling link, a link back
      # to itself and a subfolder: each not read is named, nothing hangs, the logs are judged.
      mkdir -p "$t/logs/sub"
      cp "$fixtures/../diagnose/fixtures/oom_two_nodes/"*.log "$t/logs/"
      mkfifo "$t/logs/pipe"
      ln -s /nonexistent "$t/logs/dangling"
      ln -s .. "$t/logs/sub/loop"
      tree >"$W/before"
      run_io /dev/null "$W/out" diagnose "$t/logs"
      expect_rc 1
      grep -q "rank 6" "$W/out" || bad "diagnose: the logs beside the FIFO were not judged (rank 6 not named)"
      for want in "logs/pipe: a FIFO" "logs/dangling: a link to nothing" "logs/sub/loop: a link to a folder already read"; do
        grep -q "skipped .*$want" "$W/err" || bad "diagnose: no line names $want"
      done
      run_io /dev/null "$W/out" collectives "$t/logs"
      grep -q "skipped .*logs/sub: a folder inside a folder given" "$W/err" || bad "collectives: the subfolder is skipped without a word"
      grep -q "skipped .*logs/pipe: a FIFO" "$W/err" || bad "collectives: the FIFO is skipped without a word"
      expect_tree_unchanged "$W/before"
      show "$(head -1 "$W/err")" ;;
    pickle_stdin)
      dump=$fixtures/evidence/fr-gloo-torch-2.8.0/stuck/nccl_trace_rank_0
      run_io "$dump" "$W/out" diagnose -
      expect_rc 2
      expect_one_line_naming "standard input" "Flight Recorder dump \(pickle\).*give the dump files"
      expect_tree_unchanged "$W/before"
      show "$(head -1 "$W/err")" ;;
    record_rank_null)
      jq '.rank = null' "$fixtures/compare/rank_ok.json" >"$t/rank-null.json"
      jq '.rank = -1' "$fixtures/compare/rank_ok.json" >"$t/rank-negative.json"
      tree >"$W/before"
      run_io /dev/null "$W/out" compare "$t/rank-negative.json"
      expect_rc 2
      negative=$(sed "s|$t/rank-negative.json|FILE|" "$W/err")
      run_io /dev/null "$W/out" compare "$t/rank-null.json"
      expect_rc 2
      expect_one_line_naming "$t/rank-null.json" '"rank" is not an integer'
      [ "$(sed "s|$t/rank-null.json|FILE|" "$W/err")" = "$negative" ] || bad "null and -1 are not refused alike"
      expect_tree_unchanged "$W/before"
      show "$(head -1 "$W/err")" ;;
    ras_keys)
      trimmed=$fixtures/evidence/ras-text/status-trimmed.json
      run_io /dev/null "$W/out" diagnose "$trimmed" --json "$t/report.json" -q
      expect_rc 1
      grep -q "not NCCL RAS JSON" "$W/err" && bad "refused: $(head -c 300 "$W/err")"
      jq -e 'any(.findings[]; .code == "ras-rank-dead")' "$t/report.json" >/dev/null 2>&1 ||
        bad "no ras-rank-dead finding from $trimmed"
      expect_tree_unchanged "$W/before" "$t/report.json"
      # A document that does lack a key is told which.
      printf '{"nccl_version": "2.28.9", "cuda_runtime_version": 12080, "communicators": {}}\n' >"$t/bad-ras.json"
      run_io /dev/null "$W/out" diagnose "$t/bad-ras.json" -q
      grep -q '"communicators" is a JSON object, not an array' "$W/err" || bad "the wrong key is not named: $(head -c 300 "$W/err")"
      show "$(head -1 "$W/err")" ;;
  esac
  ;;

*)
  say "unknown case $case_name"
  exit 1
  ;;
esac

[ $fail -eq 0 ] && say "PASS [$case_name]"
exit $fail
