// Reading the logs people already have when a job hangs into per-rank collective sequences and
// watchdog states for compare/collectives.h:
//  - NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL lines as printed since NCCL 2.18
//      host:pid:tid [dev] NCCL INFO AllReduce: opCount 1a sendbuff 0x.. recvbuff 0x.. count 1024
//      datatype 7 op 0 root 0 comm 0x.. [nranks=8] stream 0x..
//    (count with %zi before 2.23, %zu after; Send/Recv print (nil) for the unused buffer and the
//    peer as root). Calls are ordered by line order per (host, pid, comm pointer); the pointer is
//    process-local and is mapped to a cross-rank identity through the "Init COMPLETE" line
//    (commId, or parent + splitCount + color for ncclCommSplit).
//  - PyTorch ProcessGroupNCCL watchdog lines: WorkNCCL(SeqNum=.., OpType=.., NumelIn=..,
//    NumelOut=.., Timeout(ms)=..) and "last enqueued [NCCL ]work: N, last completed [NCCL ]work: M",
//    with the process group from "[PG ID i PG GUID g(name) Rank r]" or "[PG i Rank r]".
// Launcher prefixes are stripped and give the job-wide rank where they carry one: "[rank3]:",
// srun --label "11: ", Open MPI --tag-output "[1,3]<stdout>:", Ray's "(RayTrainWorker pid=615,
// ip=10.0.0.6)", timestamps. Two records glued on one line by a shared terminal are split.
// No MPI.
#pragma once

#include <istream>
#include <string>

#include "collect/collective_input.h"

namespace denpex {

// Parses a log from `in`; `path` names it in messages. Never fails: lines that look like one of
// the records above but do not parse are counted in `unreadable` (with samples); other lines are
// ignored. Calls on communicators without an Init COMPLETE line are counted in
// unattributed_calls.
CollectiveInput parse_nccl_log(const std::string& path, std::istream& in);

// Opens and parses `path`. status missing when it cannot be opened.
CollectiveInput read_nccl_log(const std::string& path);

}  // namespace denpex
