"""A small torch.distributed job on the CPU (gloo) that fails one known way, started by the real
torchrun: the failure logs of tests/real/diagnose_case.sh are what real PyTorch prints for it.

usage: torchrun --nproc-per-node N gloo_job.py CASE
  detail-mismatch   rank 2 calls all_gather where the others call all_reduce
                    (run under TORCH_DISTRIBUTED_DEBUG=DETAIL)
  size-mismatch     rank 1 all_reduces 8 elements, the others 4 (DETAIL)
  raise-first       rank 1 raises at step 3; the others wait in the next all_reduce
  sigkill           rank 2 is killed with SIGKILL at step 2; the others wait in all_reduce
  monitored-barrier rank 1 never reaches monitored_barrier; rank 0 names it
"""
import datetime
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record


def steps(rank, n, fail_at=None, failure=None):
    t = torch.ones(4)
    for step in range(n):
        if step == fail_at and failure is not None:
            failure()
        dist.all_reduce(t)
        print(f"rank {rank} step {step} done", flush=True)


@record
def main():
    case = sys.argv[1]
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
    rank = dist.get_rank()
    if case == "detail-mismatch":
        t = torch.ones(4)
        if rank == 2:
            dist.all_gather([torch.zeros(4) for _ in range(dist.get_world_size())], t)
        else:
            dist.all_reduce(t)
    elif case == "size-mismatch":
        dist.all_reduce(torch.ones(8 if rank == 1 else 4))
    elif case == "raise-first":
        def bad_batch():
            raise ValueError("bad batch at step 3: labels out of range")
        steps(rank, 6, 3 if rank == 1 else None, bad_batch)
    elif case == "sigkill":
        def killed():
            os.kill(os.getpid(), signal.SIGKILL)
        steps(rank, 6, 2 if rank == 2 else None, killed)
    elif case == "monitored-barrier":
        if rank == 1:
            time.sleep(20)
        else:
            dist.monitored_barrier(timeout=datetime.timedelta(seconds=3))
    else:
        raise SystemExit(f"unknown case {case}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
