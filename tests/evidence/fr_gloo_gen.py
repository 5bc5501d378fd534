#!/usr/bin/env python3
"""Makes real PyTorch Flight Recorder dumps on the CPU, with gloo: torch 2.8.0 is the first
release whose Flight Recorder records gloo collectives (2.7.1 records NCCL only; its
ProcessGroupGloo never calls the recorder). Each scenario runs RANKS processes on one machine
(a file store, gloo over loopback), each writing what torch._C._distributed_c10d._dump_fr_trace()
returns (the bytes torch's DebugInfoWriter writes to TORCH_FR_DUMP_TEMP_FILE + rank) and the
_dump_fr_trace_json() form, then torch's own C++ pickler output for typed values (torch.jit's
restore_type_tag and build_*list globals).

usage: fr_gloo_gen.py OUTDIR      (with torch 2.8+ importable: PYTHONPATH=<its site-packages>)
Scenarios (OUTDIR/<name>/nccl_trace_rank_<r>, OUTDIR/<name>-json/nccl_trace_rank_<r>.json):
  agree           every rank makes the same 7 calls (all_reduce, broadcast, all_gather, send/recv)
  size_mismatch   rank 2's third all_reduce has 8 elements, the others' 4
  dtype_mismatch  rank 1's second all_reduce is float64, the others' float32
  stuck           rank 3 stops before the fourth all_reduce; the others time out in it
"""
import datetime
import os
import subprocess
import sys
import zipfile

RANKS = 4
TIMEOUT_S = 4


def rank_main(scenario, rank, world, store, out):
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=TIMEOUT_S))
    try:
        x = torch.ones(4)
        dist.all_reduce(x)
        dt = torch.float64 if scenario == "dtype_mismatch" and rank == 1 else torch.float32
        dist.all_reduce(torch.ones(4, dtype=dt))
        dist.broadcast(x, 0)
        n = 8 if scenario == "size_mismatch" and rank == 2 else 4
        dist.all_reduce(torch.ones(n))
        if scenario == "stuck" and rank == 3:
            raise SystemExit(0)  # leaves before the fourth all_reduce, dumping first (finally)
        dist.all_reduce(x)
        parts = [torch.zeros(4) for _ in range(world)]
        dist.all_gather(parts, x)
        if rank == 0:
            dist.send(x, 1)
        elif rank == 1:
            dist.recv(x, 0)
    except (RuntimeError, ValueError) as e:  # a mismatch or a timeout: dump what was recorded
        print(f"rank {rank}: {type(e).__name__}: {str(e).splitlines()[0][:120]}", file=sys.stderr)
    finally:
        c10d = torch._C._distributed_c10d
        with open(os.path.join(out, scenario, f"nccl_trace_rank_{rank}"), "wb") as f:
            f.write(c10d._dump_fr_trace())
        with open(os.path.join(out, scenario + "-json", f"nccl_trace_rank_{rank}.json"), "wb") as f:
            f.write(c10d._dump_fr_trace_json())
    os._exit(0)  # no destroy_process_group: a peer that left would make it wait


def torch_pickler(out):
    """torch's C++ pickler (torch::jit::pickle_save) on typed values: the pickle inside the zip."""
    import torch

    d = os.path.join(out, "torch-pickler")
    os.makedirs(d, exist_ok=True)
    values = {
        "dict-of-int-lists": {"input_sizes": [[4, 2], [8]], "output_sizes": [[4, 2]]},
        "double-list": [1.5, 2.5],
        "bool-list": [True, False],
        "string-list": ["Float", "BFloat16"],
    }
    for name, v in values.items():
        z = zipfile.ZipFile(__import__("io").BytesIO(torch._C._pickle_save(v)))
        pkl = [n for n in z.namelist() if n.endswith("data.pkl")][0]
        with open(os.path.join(d, "torch-pickler-" + name + ".pkl"), "wb") as f:
            f.write(z.read(pkl))


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--rank":
        rank_main(sys.argv[2], int(sys.argv[3]), RANKS, sys.argv[4], sys.argv[5])
        return 0
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = os.path.abspath(sys.argv[1])
    import torch

    print(f"fr_gloo_gen: torch {torch.__version__}")
    env = dict(os.environ, TORCH_FR_BUFFER_SIZE="200", GLOO_SOCKET_IFNAME="lo",
               MASTER_ADDR="127.0.0.1")
    for scenario in ("agree", "size_mismatch", "dtype_mismatch", "stuck"):
        for sub in (scenario, scenario + "-json"):
            os.makedirs(os.path.join(out, sub), exist_ok=True)
        store = os.path.join(out, f".store-{scenario}")
        if os.path.exists(store):
            os.remove(store)
        procs = [subprocess.Popen([sys.executable, __file__, "--rank", scenario, str(r), store, out],
                                  env=env) for r in range(RANKS)]
        for p in procs:
            p.wait(timeout=120)
        os.remove(store) if os.path.exists(store) else None
    torch_pickler(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
