#!/usr/bin/env bash
# Every signature's verify command works when pasted on a machine with the package installed:
#
#   verify_commands.sh BUILD_DIR WORK_DIR [--self-test]
#
# The package's files are installed from the build tree into WORK_DIR/stage with the Debian
# package's prefix (/usr), by the install scripts CMake generated for launch/ (denpex-probe and
# the recorder). Then, for each signature (`denpex-probe explain --json` lists them):
#   - the command is split as the shell splits it; a pipeline's earlier stages are the user's
#     rerun, its last stage must be `denpex-probe diagnose -` or `denpex-probe collectives -`;
#   - the program is denpex-probe, after NAME=VALUE assignments only; a value that is a path
#     must be a file the package installs (so the recorder is named by its installed path),
#     and the recorder is preloaded into the user's job, never into denpex-probe (which calls
#     no NCCL: it would record nothing);
#   - the subcommand is one `denpex-probe --help` lists, each option one its `--help` lists;
#   - run from the staged package (stdin empty, the recorder's path mapped into the stage), it
#     does not fail on its command line: no usage error, and `explain X` exits 0.
# --self-test checks the checker: commands it must refuse and ones it must pass.
# Exit 0 when every command passes; 1 naming each one that does not; 2 when it cannot run.
set -u
BUILD=${1:?build dir}
WORK=${2:?work dir}
command -v jq >/dev/null || { echo "verify_commands.sh: jq is needed" >&2; exit 2; }
rm -rf "$WORK"
mkdir -p "$WORK"
STAGE=$WORK/stage
DESTDIR=$STAGE cmake -DCMAKE_INSTALL_PREFIX=/usr -P "$BUILD/launch/cmake_install.cmake" >"$WORK/install.log" 2>&1 ||
  { echo "verify_commands.sh: installing launch/ into $STAGE failed:" >&2; cat "$WORK/install.log" >&2; exit 2; }
PROBE=$STAGE/usr/bin/denpex-probe
[ -x "$PROBE" ] || { echo "verify_commands.sh: the package installs no /usr/bin/denpex-probe" >&2; exit 2; }

"$PROBE" --help >"$WORK/help" 2>&1 || { echo "verify_commands.sh: denpex-probe --help failed" >&2; exit 2; }
SUBS=$(sed -n '/^Subcommands:/,$p' "$WORK/help" | awk 'NR > 1 && /^  [a-z]/ { print $1 }')
[ -n "$SUBS" ] || { echo "verify_commands.sh: no subcommands in denpex-probe --help" >&2; exit 2; }
"$PROBE" explain --json >"$WORK/index.json" || { echo "verify_commands.sh: denpex-probe explain --json failed" >&2; exit 2; }
IDS=$(jq -r '.signatures[].id' "$WORK/index.json")
[ -n "$IDS" ] || { echo "verify_commands.sh: explain lists no signature" >&2; exit 2; }

# OPTS SUB: the long and short options `denpex-probe [SUB] --help` lists, one a line.
opts() {
  if [ -n "$1" ]; then "$PROBE" "$1" --help; else "$PROBE" --help; fi 2>&1 |
    grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[ ,]//' | sort -u
}
is_sub() { printf '%s\n' $SUBS | grep -qx -- "$1"; }

failures=0
fail() { echo "FAIL $id: $verify: $*"; failures=$((failures + 1)); }

# check_stage WORDS...: the last stage of a pipeline, the denpex-probe command line.
check_stage() {
  local preload_into_probe=0 w
  while [ $# -gt 0 ] && [[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
    local name=${1%%=*} value=${1#*=}
    if [[ $value == /* ]] && [ ! -e "$STAGE$value" ]; then fail "$name=$value: the package installs no $value"; return; fi
    [ "$name" = LD_PRELOAD ] && preload_into_probe=1
    env_assign+=("$name=$value")
    shift
  done
  [ $# -gt 0 ] || { fail "no program"; return; }
  [ "$1" = denpex-probe ] || { fail "runs '$1', which the package does not provide"; return; }
  [ $preload_into_probe = 0 ] || { fail "preloads the recorder into denpex-probe, which calls no NCCL: preload it into the job"; return; }
  shift
  local sub=""
  if [ $# -gt 0 ] && is_sub "$1"; then sub=$1; shift; fi
  local known
  known=$(opts "$sub")
  for w in "$@"; do
    case $w in
      -) ;;
      -*) printf '%s\n' "$known" | grep -qx -- "${w%%=*}" || fail "denpex-probe ${sub:+$sub }--help lists no option ${w%%=*}" ;;
    esac
  done
  [ "$sub" = explain ] && [ $# -gt 0 ] && { "$PROBE" explain "$1" >/dev/null 2>&1 || fail "explain does not know '$1'"; }
  args=("$@")
  run_sub=$sub
}

# check_verify: checks $id's $verify; counts a failure in $failures.
check_verify() {
  [ -n "$verify" ] && [ "$verify" != null ] || { verify="(none)"; fail "no verify command"; return; }
  case ${verify//2>&1/} in *'$('*|*'`'*|*'>'*|*'<'*|*';'*|*'&'*) fail "shell syntax beyond a pipeline (and 2>&1)"; return ;; esac
  local last=${verify##*|}
  if [ "$last" != "$verify" ] && ! [[ $last =~ ^\ *denpex-probe\ (diagnose|collectives)\ -\ *$ ]]; then
    fail "a pipeline must end in 'denpex-probe diagnose -'"
    return
  fi
  env_assign=() args=() run_sub=""
  local before=$failures w stage
  # The user's rerun before the pipe: its own programs, but a path it names is the package's.
  IFS='|' read -r -a stages <<<"$verify"
  for stage in "${stages[@]:0:${#stages[@]}-1}"; do
    set -f
    for w in $stage; do
      [[ $w =~ ^[A-Za-z_][A-Za-z0-9_]*=/ ]] || continue
      [ -e "$STAGE${w#*=}" ] || fail "${w%%=*}=${w#*=}: the package installs no ${w#*=}"
    done
    set +f
  done
  # shellcheck disable=SC2086 # split as the shell splits a pasted line (no globs in verify text)
  set -f; check_stage $last; set +f
  [ $failures = "$before" ] || return
  # Run it from the stage: standard input empty (the rerun's log), paths mapped into the stage.
  local env_run=() a n v rc err=$WORK/err.$id
  for a in "${env_assign[@]}"; do
    n=${a%%=*} v=${a#*=}
    [[ $v == /* ]] && v=$STAGE$v
    env_run+=("$n=$v")
  done
  env "${env_run[@]}" timeout 120 "$PROBE" ${run_sub:+"$run_sub"} "${args[@]}" </dev/null >/dev/null 2>"$err"
  rc=$?
  if grep -q -e 'see --help' -e 'cannot be used with' -e 'not expected' "$err"; then
    fail "its command line is refused: $(head -1 "$err")"
  elif [ "$run_sub" = explain ] && [ $rc != 0 ]; then
    fail "exits $rc"
  elif [ $rc -ge 124 ]; then
    fail "did not finish (exit $rc)"
  fi
}

# The checker itself: commands it must refuse, and ones it must pass.
if [ "${3:-}" = --self-test ]; then
  recorder=$(find "$STAGE" -name libdenpex-trace.so | head -1)
  recorder=${recorder#"$STAGE"}
  bad=("torchrun train.py" "denpex-probe diagnoze -" "denpex-probe diagnose --no-such-option -"
       "denpex-probe explain no.such.signature" "LD_PRELOAD=libdenpex-trace.so denpex-probe diagnose -"
       "LD_PRELOAD=/usr/lib/denpex/nothing.so python train.py" "denpex-probe diagnose --baseline b.json -"
       "python train.py > log; denpex-probe diagnose log" "python train.py | grep NCCL"
       "LD_PRELOAD=/opt/libdenpex-trace.so python train.py 2>&1 | denpex-probe diagnose -"
       "LD_PRELOAD=$recorder denpex-probe collectives -" "denpex-probe collectives --json")
  good=("denpex-probe diagnose -" "NCCL_DEBUG=INFO python train.py 2>&1 | denpex-probe diagnose -"
        "denpex-probe explain nccl.init" "denpex-probe --json -" "denpex-probe --require-gpu"
        "denpex-probe explain collective-mismatch"
        "LD_PRELOAD=$recorder NCCL_DEBUG=INFO python train.py 2>&1 | denpex-probe collectives -")
  wrong=0
  for verify in "${bad[@]}"; do
    id=self failures=0; check_verify >/dev/null
    [ $failures -gt 0 ] || { echo "self-test: '$verify' was not refused"; wrong=1; }
  done
  for verify in "${good[@]}"; do
    id=self failures=0; check_verify
    [ $failures = 0 ] || wrong=1
  done
  [ $wrong = 0 ] && echo "self-test: ${#bad[@]} bad commands refused, ${#good[@]} good ones passed"
  exit $wrong
fi

for id in $IDS; do
  verify=$("$PROBE" explain --json "$id" | jq -r .verify)
  check_verify
done

n=$(printf '%s\n' $IDS | wc -l)
echo "$n verify commands checked, $failures failing"
[ $failures = 0 ]
