#!/usr/bin/env bash
# The import oracle: for every pair of a real PyTorch wheel and a real NCCL wheel in the matrix
# (the PyTorch environment with `pip install nvidia-nccl-cu12==X` done to a hard-linked copy of
# it), denpex-probe judges the environment and then the real `LD_BIND_NOW=1 python -c "import
# torch"` runs in it. They must agree: where the probe reports nccl-abi-mismatch, the import
# fails naming one of the symbols the probe lists as missing; where the probe passes, the import
# succeeds. The expected verdicts are written out below, so a probe that went blind (passing
# everything, as the import would not) fails too. Then the loader's rules that decide which
# NCCL PyTorch gets: LD_LIBRARY_PATH loses to the wheel's DT_RPATH, LD_PRELOAD wins.
# usage: oracle.sh PROBE SCRATCH_BASE
source "$(dirname "$0")/lib.sh"
real_setup "$1" "$2"

NCCLS="nccl-2.18.3 nccl-2.19.3 nccl-2.20.5 nccl-2.21.5 nccl-2.26.2 nccl-2.27.7 nccl-cu13-2.27.7"
# torch version, NCCL environment -> what the probe must say: pass, or the missing symbols.
expect() {
  case "$1 $2" in
    "2.3.1 nccl-2.18.3") echo "ncclCommDeregister ncclCommRegister" ;;
    "2.7.1 nccl-2.18.3") echo "ncclCommDeregister ncclCommInitRankScalable ncclCommRegister ncclMemAlloc ncclMemFree" ;;
    "2.7.1 nccl-2.19.3" | "2.7.1 nccl-2.20.5" | "2.7.1 nccl-2.21.5") echo "ncclCommInitRankScalable" ;;
    *) echo pass ;;
  esac
}

pairs=0
table=""
# judge_pair NAME SITE EXPECTED [VAR=value...]: probe and oracle in the same environment.
judge_pair() {
  local name=$1 site=$2 want=$3; shift 3
  local out=$SCRATCH/$name
  probe_alone "$out" PYTHONPATH="$site" "$@"
  py_run "$out.import" "import torch" PYTHONPATH="$site" LD_BIND_NOW=1 "$@"
  local missing verdict
  missing=$(missing_symbols "$out.json" | sort -u | tr '\n' ' ' | sed 's/ $//')
  if [ -n "$missing" ]; then verdict=$missing; else verdict=pass; fi
  local imported=ok
  [ "$PY_RC" = 0 ] || imported="fails: $(grep -o 'undefined symbol: [A-Za-z0-9_]*' "$out.import.err" | head -1)"
  table+=$(printf '\n  %-22s probe exit %s, missing: %-45s import %s' "$name" "$PROBE_RC" "$verdict" "$imported")
  pairs=$((pairs + 1))
  [ "$verdict" = "$want" ] || { cat "$out.txt" >&2; fail "$name: the probe says '$verdict', expected '$want'"; }
  if [ "$verdict" = pass ]; then
    [ "$PROBE_RC" = 0 ] || { cat "$out.txt" >&2; fail "$name: no ABI finding, but exit $PROBE_RC"; }
    [ "$PY_RC" = 0 ] || { cat "$out.import.err" >&2; fail "$name: the probe passes, the real import fails"; }
  else
    [ "$PROBE_RC" = 1 ] || fail "$name: exit $PROBE_RC with nccl-abi-mismatch"
    jq -e '[.findings[] | select(.code=="nccl-abi-mismatch")] | length == 1' "$out.json" >/dev/null ||
      fail "$name: no nccl-abi-mismatch finding"
    [ "$PY_RC" != 0 ] || fail "$name: the probe reports missing symbols, the real import succeeds"
    local sym
    sym=$(grep -o 'undefined symbol: [A-Za-z0-9_]*' "$out.import.err" | head -1 | sed 's/.*: //')
    [ -n "$sym" ] || { cat "$out.import.err" >&2; fail "$name: the import failed without an undefined symbol"; }
    case " $verdict " in
      *" $sym "*) ;;
      *) fail "$name: the import names $sym, which the probe does not list ($verdict)" ;;
    esac
  fi
}

for torch in 2.3.1 2.7.1; do
  for nccl in $NCCLS; do
    site=$SCRATCH/torch-$torch+$nccl
    copy_env "torch-$torch" "$site"
    swap_nccl "$site" "$nccl"
    judge_pair "torch-$torch+$nccl" "$site" "$(expect "$torch" "$nccl")"
    # A pin other than the installed wheel is a warning, never the verdict.
    pin=$(jq -r '.ranks[0].torch.nccl_requirement' "$SCRATCH/torch-$torch+$nccl.json")
    case "$pin" in
      *"==${nccl##*-}") [ "$(finding torch-nccl-pin-mismatch "$SCRATCH/torch-$torch+$nccl.json")" = "" ] ||
                          fail "torch-$torch+$nccl: a pin mismatch for the pinned wheel" ;;
      *) [ "$(finding torch-nccl-pin-mismatch "$SCRATCH/torch-$torch+$nccl.json")" = "warning 0" ] ||
           fail "torch-$torch+$nccl: no torch-nccl-pin-mismatch warning for $pin" ;;
    esac
    rm -rf "$site"
  done
done

# The loader's order, in the unmodified environments: NCCL 2.18.3 on LD_LIBRARY_PATH does not
# reach PyTorch (libtorch_cuda.so's DT_RPATH comes first), preloaded it does.
old=$(dirname "$(nccl_lib nccl-2.18.3)")
judge_pair "2.7.1+LD_LIBRARY_PATH" "$ENVS/torch-2.7.1" pass LD_LIBRARY_PATH="$old"
judge_pair "2.3.1+LD_PRELOAD" "$ENVS/torch-2.3.1" "ncclCommDeregister ncclCommRegister" \
  LD_PRELOAD="$old/libnccl.so.2"
echo "$pairs environments, probe and import agree:$table"
echo "PASS"
