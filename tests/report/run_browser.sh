#!/usr/bin/env bash
# The HTML report in a real browser: Debian's chromium, headless, as root with --no-sandbox,
# driven over the DevTools protocol (browser_check.py, python3-websocket). Pages from the real
# binary and from a report written by hand:
#   - diagnose on the two-node OOM: loads with no console error, its script runs, the leftmost
#     mark of the timeline is the initiating rank 6;
#   - the same logs with "</script><script>alert(1)</script>" in the OOM line: shown as text,
#     never run (no dialog, one <script> element, no CSP violation);
#   - 1,000 ranks on 125 hosts (diagnosis.timeline): at most one row per host (here at most 32
#     rows covering the 125 hosts), the first event the initiating rank;
#   - collectives on a COLL log: the grid with the differing call highlighted;
#   - the gate (compare) with two configurations;
#   - diagnose on the 245 MB NCCL_DEBUG=INFO COLL log of the benchmark (bench/gen_coll_log.cpp,
#     64 ranks x 20,000 steps, one rank's count differs at step 15,000): the page stays under
#     2 MB and its first event is that rank; and on a 1,000-rank, 125-host log of the same kind.
# The script's hash in the page's Content-Security-Policy is checked against the script first.
# DENPEX_SCREENSHOT_DIR=dir writes the screenshots kept in docs/img there.
#   run_browser.sh DENPEX_PROBE RENDER_REPORT GEN_COLL_LOG DIAGNOSE_FIXTURES COLLECTIVES_FIXTURES COMPARE_FIXTURES
set -u
probe=$1 render=$2 gen=$3 dx=$4 coll=$5 fixtures=$6
here=$(cd "$(dirname "$0")" && pwd)
skip=77
chromium=$(command -v chromium || true)
[ -n "$chromium" ] || { echo "SKIP: chromium is not installed (tools/install-deps.sh installs it)"; exit $skip; }
# Debian's python3 has python3-websocket; a python3 earlier on PATH (pyenv, a venv) may not.
py=
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import websocket' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "SKIP: no python3 with the websocket module (python3-websocket)"; exit $skip; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

"$probe" diagnose "$dx/oom_two_nodes" -q --html "$tmp/oom.html"
"$py" - "$tmp/oom.html" <<'PY' || fail=1
import base64, hashlib, re, sys
page = open(sys.argv[1], encoding='utf-8').read()
script = re.search(r'<script>(.*?)</script>', page, re.S).group(1)
want = "sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
csp = re.search(r"script-src '([^']+)'", page).group(1)
if csp != want:
    print(f"FAIL: the page's CSP allows {csp}, its script hashes to {want}: update kScriptHash in report/html_report.cpp")
    sys.exit(1)
print(f"ok: CSP script hash {want}")
PY

mkdir -p "$tmp/xss"
cp "$dx"/oom_two_nodes/* "$tmp/xss/"
payload='</script><script>alert(1)</script>'
sed -i "s|Tried to allocate 2.00 GiB.|Tried to allocate $payload 2.00 GiB.|" "$tmp/xss/node02.log"
grep -qF "$payload" "$tmp/xss/node02.log" || { echo "FAIL: the payload is not in the log"; fail=1; }
printf '%s\n' "$payload" >"$tmp/payload.txt"
"$probe" diagnose "$tmp/xss" -q --html "$tmp/xss.html"
grep -qF "$payload" "$tmp/xss.html" && { echo "FAIL: the payload is in the page unescaped"; fail=1; }

"$py" - "$tmp/large.json" <<'PY'
import json, sys
timeline = []
for r in range(1000):
    init = r == 461
    t = 36600.0 if init else 36600.0 + 1800 + r % 60
    timeline.append({"rank": r, "host": "gpu-node%03d" % (r // 8 + 1), "role": "initiating" if init else "collateral",
                     "what": "CUDA error: an illegal memory access" if init else "watchdog timeout in ALLREDUCE",
                     "at_us": int(t * 1e6), "when": ""})
report = {"schema": "denpex.report.v1", "mode": "diagnose", "verdict": "reject", "nranks": 1000, "nhosts": 125,
          "errors": 1, "warnings": 0, "findings": [],
          "diagnosis": {"initiating": {"ranks": [461], "hosts": ["gpu-node058"], "what": "CUDA error", "when": "05-14 10:10:00"},
                        "collateral": [{"ranks": [r for r in range(1000) if r != 461], "what": "watchdog timeout"}],
                        "launcher_claim": {"ranks": [0], "hosts": ["gpu-node001"], "what": "torchrun: rank 0",
                                           "correct": False, "note": "rank 461 failed first"},
                        "timeline": timeline},
          "inputs": {"files": ["rank%d.log" % r for r in range(1000)], "lines": 10**6, "records": 1000,
                     "collective_calls": 0, "unreadable": 0, "unreadable_samples": [], "notes": []}}
json.dump(report, open(sys.argv[1], "w"))
PY
"$render" "$tmp/large.json" --html "$tmp/large.html" || { echo "FAIL: render_report large.json"; fail=1; }

"$probe" collectives "$coll/nccl_2_28_srun_label.log" -q --html "$tmp/coll.html"
mkdir -p "$tmp/rec"
for r in 0 1 2 3; do jq --argjson r "$r" '.rank = $r | .host = "node\($r / 2 | floor + 1)"' "$fixtures/rank_ok.json" >"$tmp/rec/$r.json"; done
jq '.nccl_env = {"NCCL_PROTO": "Simple"} | .nccl.version = "2.21.5" | .nccl.origin = "LD_LIBRARY_PATH"
    | .nccl.path = "/opt/nccl-2.21.5/lib/libnccl.so.2.21.5"' "$tmp/rec/3.json" >"$tmp/r" && mv "$tmp/r" "$tmp/rec/3.json"
"$probe" compare "$tmp/rec" -q --html "$tmp/gate.html"

"$gen" "$tmp/big.log" 64 20000 15000 || fail=1
"$probe" diagnose "$tmp/big.log" -q --html "$tmp/big.html"
rm -f "$tmp/big.log"
size=$(stat -c %s "$tmp/big.html")
if [ "$size" -ge $((2 * 1024 * 1024)) ]; then echo "FAIL: the page of the 245 MB log is $size bytes"; fail=1; fi
echo "ok: the page of the 245 MB log is $size bytes"
"$gen" "$tmp/k.log" 1000 30 12 || fail=1
"$probe" diagnose "$tmp/k.log" -q --html "$tmp/k.html"
rm -f "$tmp/k.log"

shots=()
if [ -n "${DENPEX_SCREENSHOT_DIR:-}" ]; then
  mkdir -p "$DENPEX_SCREENSHOT_DIR"
  shots=(--screenshot "$tmp/oom.html=$DENPEX_SCREENSHOT_DIR/diagnose-timeline.png"
         --screenshot "$tmp/coll.html=$DENPEX_SCREENSHOT_DIR/collectives-grid.png"
         --screenshot "$tmp/gate.html=$DENPEX_SCREENSHOT_DIR/gate-configurations.png"
         --screenshot "$tmp/large.html=$DENPEX_SCREENSHOT_DIR/diagnose-1000-ranks.png")
fi
"$py" "$here/browser_check.py" "$chromium" \
  "$tmp/oom.html:first=6" \
  "$tmp/xss.html:first=6,text=$tmp/payload.txt" \
  "$tmp/large.html:first=461,rows<=32,hosts=125" \
  "$tmp/coll.html:grid" \
  "$tmp/gate.html" \
  "$tmp/big.html:first=63" \
  "$tmp/k.html:first=999,rows<=125" \
  "${shots[@]}"
rc=$?
[ $rc -eq $skip ] && exit $skip
[ $rc -eq 0 ] || fail=1
[ $fail -eq 0 ] && echo PASS
exit $fail
