#!/usr/bin/env bash
# The gate's own TCPStore server (rank 0 serves it where no torchrun agent does) answering
# torch's own TCPStore client, of torch 2.7.1 (VALIDATE then PING) and 2.3.1: set, get, add,
# check, wait (including a wait another client's set wakes up) and a wait that times out.
#   run_store_server_interop.sh DRIVER SCRATCH
set -euo pipefail
DRIVER=$1
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/real/paths.sh
source "$HERE/../real/paths.sh"
bash "$HERE/torch_env.sh" 2.7.1 2.3.1 || { echo "SKIP: torch wheels could not be fetched into $WHEEL_CACHE" >&2; exit 77; }
mkdir -p "$2"
for v in 2.7.1 2.3.1; do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$DRIVER" "$port" 120 >"$2/driver-$v.txt" 2>&1 & drv=$!
  for _ in $(seq 100); do grep -q listening "$2/driver-$v.txt" 2>/dev/null && break; sleep 0.05; done
  PYTHONPATH=$WHEEL_TREES/env/torch-$v timeout 120 python3 - "$port" <<'PY' || { kill "$drv"; echo "FAIL: torch $v's client against the gate's server" >&2; exit 1; }
import sys, threading, time
from datetime import timedelta
import torch
import torch.distributed as dist
port = int(sys.argv[1])
kw = {"use_libuv": False} if torch.__version__.startswith("2.3") else {}
def client(t=10):
    return dist.TCPStore("127.0.0.1", port, is_master=False, timeout=timedelta(seconds=t), wait_for_workers=False, **kw)
a, b = client(), client()
a.set("k", b"v1")
assert b.get("k") == b"v1"
assert a.add("n", 2) == 2 and b.add("n", 3) == 5
assert a.check(["k", "n"]) and not a.check(["k", "absent"])
threading.Timer(0.3, lambda: b.set("later", b"x")).start()
t0 = time.time(); a.wait(["later"]); assert time.time() - t0 < 5
c = client(1)
t0 = time.time()
try:
    c.wait(["never"], timedelta(seconds=1)); raise SystemExit("a wait for a key nobody sets returned")
except SystemExit: raise
except Exception: pass
print("ok torch", torch.__version__, "client against the gate's server: set/get/add/check/wait")
PY
  kill "$drv" 2>/dev/null || true; wait "$drv" 2>/dev/null || true
done
