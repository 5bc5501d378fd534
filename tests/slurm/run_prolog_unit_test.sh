#!/bin/bash
# denpex-prolog without Slurm: verdicts, the one-line reasons, configuration errors, the time
# bound, on_error, and a spool that cannot be written.
# usage: run_prolog_unit_test.sh PROBE PROLOG STANDINS_DIR WORKDIR
set -euo pipefail
probe=$(realpath "${1:?usage: run_prolog_unit_test.sh PROBE PROLOG STANDINS_DIR WORKDIR}")
prolog=$(realpath "${2:?missing PROLOG}")
standins=$(realpath "${3:?missing STANDINS_DIR}")
work=${4:?missing WORKDIR}
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"; chmod 755 "$work"; work=$(realpath "$work")
host=$(hostname)

clean=(env -i PATH=/usr/bin:/bin)
"${clean[@]}" "$probe" -q --write-baseline "$work/good.json" || true
"${clean[@]}" LD_LIBRARY_PATH="$standins/nccl-2.27.3" "$probe" -q --write-baseline "$work/other.json" || true
grep -q '"2.27.3"' "$work/other.json" || fail "other.json does not pin 2.27.3"

# run NAME EXPECTED_EXIT CONF_LINES...: runs the prolog as slurmd would (almost no environment).
run() {
  local name=$1 want=$2 rc=0
  shift 2
  printf '%s\n' "$@" >"$work/$name.conf"
  env -i SLURM_JOB_ID=42 SLURMD_NODENAME=node7 DENPEX_PROLOG_CONF="$work/$name.conf" \
    timeout 120 "$prolog" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$work/$name.out" "$work/$name.err" >&2; fail "$name: exit $rc, expected $want"; }
  echo "ok $name (exit $rc): $(head -n 1 "$work/$name.err")"
}
# err_is NAME EXPECTED_FIRST_LINE_PREFIX
err_is() {
  local got; got=$(head -n 1 "$work/$1.err")
  case $got in "$2"*) ;; *) fail "$1: stderr '$got', expected it to start with '$2'" ;; esac
  [ "$(wc -l <"$work/$1.err")" = 1 ] || fail "$1: more than one line on stderr: $(cat "$work/$1.err")"
}
base=("probe = $probe" "spool = $work/spool" "syslog = no" "timeout = 20")

# Typed by a person: --help answers and changes nothing (no probe run, no spool, no drain), an
# unknown argument is refused with one line. The configuration names a spool it must not make.
printf '%s\n' "${base[@]}" "baseline = $work/other.json" "scontrol_drain = yes" >"$work/help.conf"
sed -i "s|^spool = .*|spool = $work/help-spool|" "$work/help.conf"
rc=0; env -i DENPEX_PROLOG_CONF="$work/help.conf" "$prolog" --help >"$work/help.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "--help: exit $rc: $(cat "$work/help.out")"
grep -q "^usage: denpex-prolog" "$work/help.out" || fail "--help: no usage line"
[ ! -e "$work/help-spool" ] || fail "--help ran the prolog (it made the spool)"
rc=0; env -i DENPEX_PROLOG_CONF="$work/help.conf" "$prolog" --drain-me >"$work/arg.out" 2>"$work/arg.err" || rc=$?
[ "$rc" = 2 ] || fail "an unknown argument: exit $rc"
[ "$(wc -l <"$work/arg.err")" = 1 ] && grep -q "unknown argument --drain-me" "$work/arg.err" || fail "an unknown argument: $(cat "$work/arg.err")"
[ ! -e "$work/help-spool" ] || fail "an unknown argument ran the prolog"
echo "ok --help and an unknown argument change nothing"

run pass 0 "${base[@]}" "baseline = $work/good.json"
[ ! -s "$work/pass.err" ] || fail "pass: stderr not empty: $(cat "$work/pass.err")"
jq -e '.rank == 0 and (.nccl.version | length) > 0' "$work/spool/$host.json" >/dev/null ||
  fail "pass: no record at $work/spool/$host.json"
head -n 1 "$work/spool/$host.txt" | grep -q "^# node node7, job 42, .*exit 0$" || fail "pass: $host.txt header: $(head -n 1 "$work/spool/$host.txt")"

run reject 1 "${base[@]}" "baseline = $work/other.json"
err_is reject "denpex-prolog: denpex: nccl-version-mismatch: rank 0 on $host loads NCCL "
grep -q "pins 2.27.3" "$work/reject.err" || fail "reject: reason does not name the pinned version"

run no-baseline 1 "${base[@]}" "baseline = $work/absent.json"
err_is no-baseline "denpex-prolog: denpex: could not judge: baseline $work/absent.json is missing"
run no-baseline-pass 0 "${base[@]}" "baseline = $work/absent.json" "on_error = pass"
err_is no-baseline-pass "denpex-prolog: could not judge node node7, letting the job run (on_error=pass)"

echo '{"schema":"something.else"}' >"$work/foreign.json"
run foreign 1 "${base[@]}" "baseline = $work/foreign.json"
err_is foreign "denpex-prolog: denpex: could not judge: denpex-probe: --baseline"

run bad-key 1 "${base[@]}" "baseline = $work/good.json" "basline = x"
err_is bad-key "denpex-prolog: denpex: $work/bad-key.conf:6: unknown key 'basline'"
run bad-timeout 1 "${base[@]}" "timeout = soon"
err_is bad-timeout "denpex-prolog: denpex: $work/bad-timeout.conf: timeout 'soon' is not a whole number"
run no-conf-file 1
rm -f "$work/no-conf-file.conf"
rc=0; env -i DENPEX_PROLOG_CONF="$work/no-conf-file.conf" "$prolog" 2>"$work/no-conf-file.err" || rc=$?
[ "$rc" = 1 ] || fail "no-conf-file: exit $rc"
err_is no-conf-file "denpex-prolog: denpex: configuration $work/no-conf-file.conf (DENPEX_PROLOG_CONF) does not exist"

# A container-only host: a driver, no NCCL of its own. A private mount namespace
# gives the probe a loader cache that lists the system directories and a driver stand-in only,
# so this machine's NCCL (in /usr/local/cuda-13.0/lib, listed in the real cache) is not found.
# A baseline that pins only the driver passes it; one that pins NCCL drains it.
if unshare -m true 2>/dev/null && command -v ldconfig >/dev/null; then
  H=$work/container-host
  mkdir -p "$H/driver"
  cp "$standins/cuda-550.54.15/libcuda.so.550.54.15" "$H/driver/"
  ln -sf libcuda.so.550.54.15 "$H/driver/libcuda.so.1"
  printf '/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n%s\n' "$H/driver" >"$H/ld.so.conf"
  ldconfig -X -C "$H/ld.so.cache" -f "$H/ld.so.conf"
  # The example host baseline of examples/container pins exactly this driver (550.54.15, CUDA
  # 12.4), no net plugin, and no NCCL or PyTorch.
  cp "$(dirname "$prolog")/../../examples/container/baseline-host.json" "$H/driver-only.json"
  echo '{"schema":"denpex.baseline.v1","cuda_driver":{"library_version":"535.104.05"}}' >"$H/other-driver.json"
  # run_host NAME EXPECTED_EXIT CONF_LINES...: run() inside the namespace with that cache.
  run_host() {
    local name=$1 want=$2 rc=0
    shift 2
    printf '%s\n' "$@" >"$work/$name.conf"
    env -i SLURM_JOB_ID=43 SLURMD_NODENAME=node8 DENPEX_PROLOG_CONF="$work/$name.conf" \
      unshare -m sh -c 'mount --bind "$1" /etc/ld.so.cache && exec timeout 120 "$2"' sh \
      "$H/ld.so.cache" "$prolog" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
    [ "$rc" = "$want" ] || { cat "$work/$name.out" "$work/$name.err" >&2; fail "$name: exit $rc, expected $want"; }
    echo "ok $name (exit $rc): $(head -n 1 "$work/$name.err")"
  }
  hbase=("probe = $probe" "spool = $work/host-spool" "syslog = no" "timeout = 20")
  run_host container-host 0 "${hbase[@]}" "baseline = $H/driver-only.json"
  [ ! -s "$work/container-host.err" ] || fail "container-host: stderr not empty: $(cat "$work/container-host.err")"
  jq -e '.nccl.status == "missing" and .cuda_driver.library_version == "550.54.15"' \
    "$work/host-spool/$host.json" >/dev/null || fail "container-host: record: $(cat "$work/host-spool/$host.json")"
  # What the host owns is still gated: another driver than the pinned one (a warning; --strict
  # makes the prolog drain on it).
  run_host container-host-driver 1 "${hbase[@]}" "baseline = $H/other-driver.json" "extra_args = --strict"
  err_is container-host-driver "denpex-prolog: denpex: cuda-driver-version-mismatch (--strict): rank 0 on $host runs driver 550.54.15"
  # A baseline that pins NCCL still requires it.
  run_host container-host-nccl 1 "${hbase[@]}" "baseline = $work/good.json"
  err_is container-host-nccl "denpex-prolog: denpex: nccl-missing: "
else
  echo "SKIPPED container-host cases: no mount namespace (unshare -m) or no ldconfig here" >&2
fi

# A probe that hangs: killed at timeout + 15 s, node drained with the reason.
printf '#!/bin/sh\nexec sleep 600\n' >"$work/hang-probe"; chmod 755 "$work/hang-probe"
start=$(date +%s)
run hang 1 "probe = $work/hang-probe" "spool = $work/spool" "syslog = no" "timeout = 1" "baseline = $work/good.json"
took=$(( $(date +%s) - start ))
[ "$took" -le 30 ] || fail "hang: the prolog took ${took}s, its bound is 16s (+5 s kill)"
err_is hang "denpex-prolog: denpex: could not judge: denpex-probe did not finish within 16s"

# A spool that cannot be written does not change the verdict.
: >"$work/not-a-dir"
run bad-spool 0 "probe = $probe" "spool = $work/not-a-dir/spool" "syslog = no" "baseline = $work/good.json"
err_is bad-spool "denpex-prolog: could not write the node record to $work/not-a-dir/spool/"
echo PASS
