// NCCL's diagnostics reports (NCCL 2.31 and later), read into the events and findings the rest of
// the room already judges. Every line is "host:pid NCCL DIAG <text>" (diagnostics_log.h: the host
// and pid of the process that printed the report, with no thread id and no device), printed to
// standard output by the process of rank 0 of a communicator, or sent back to `ncclras -D`:
//
//   RAS diagnostics (src/ras/diagnostics*.cc; NCCL_RUN_RAS_DIAGNOSTICS=1 or ncclras -D):
//     === RAS Diagnostics ===
//     [OK]   <check>: ... consistent across N ranks in comm 0xHASH
//     [INFO] <check>: mismatch across N ranks in comm 0xHASH, rank(s) {a,b} differ from rank R (V)
//     [INFO] ECC: uncorrected volatile errors on rank(s) {a} (worst=W) across N ranks in comm 0xHASH
//     [INFO] NCCL environment: mismatch across N ranks in comm 0xHASH for NCCL_X
//     [INFO] NCCL environment: NCCL_X=V on rank(s) {a,b}
//     [INFO] Xid C detected K time(s) on host H. <guidance>      ([OK] when no action is needed)
//     [INFO] <check>: diagnostics incomplete, gathered n/N ranks in comm 0xA/0xB/0xC
//     RAS diagnostics completed in T ms across N ranks | N RAS peers
//   Active diagnostics (src/diagnostics.cc, src/diagnostics/p2p.cc; NCCL_RUN_DIAGNOSTICS=1):
//     === NCCL Diagnostics ===
//     [INFO] p2p: write mismatch srcRank=a srcCudaDev=d ... dstRank=b ... path=NVL handle=...; advice
//     NCCL diagnostics completed in T ms across N ranks
//
// Rank sets list at most 8 ranks: "{0,1,2,3,4,5,6,7,...} (N=16)". The ranks are the
// communicator's; events that name job ranks (facts, failures) are taken only from the largest
// communicator an input's report names, which is the job's own when the report covers it (the
// ranks of a smaller communicator are not job ranks). Findings that name their communicator keep
// its ranks, as the RAS text reader does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "evidence/events.h"

namespace denpex::evidence {

// One judged line of a diagnostics report, kept until the input ends.
struct DiagItem {
  enum class Kind { env, version, ecc, xid, incomplete, p2p };
  Kind kind = Kind::env;
  std::string comm;        // "0x5fa31c27a9e0d1b4"; "" for host-wide Xid lines
  int nranks = -1;         // the communicator's size, -1 when the line does not say
  std::vector<int> ranks;  // the rank set as printed (at most 8)
  int listed = 0;          // the set's size: its "(N=...)" when truncated
  int ref_rank = -1;       // version: the rank the listed ones differ from; p2p: the destination
  std::string check;       // "CUDA driver version", "ECC", "Xid 79 detected 1 time on host h"
  std::string name, value; // env: NCCL_X and its value ("(unset)"); version: the reference's value
  std::string host;        // xid: the host
  long long count = -1;    // incomplete: ranks gathered; ecc: the worst count
  When when;               // the line's time, when a prefix gives one
  Evidence evidence;
};

struct DiagState {
  // The last "NCCL environment: mismatch ... for NCCL_X" line: its communicator and size, for
  // the value lines that follow it.
  std::string env_comm;
  int env_nranks = -1;
  std::vector<DiagItem> items;
};

// "{0,1,2}" -> {0,1,2}, listed 3; "{0,1,...} (N=16)" -> {0,1}, listed 16. False when `s` is no
// rank set.
bool diag_rank_set(std::string_view s, std::vector<int>* ranks, int* listed);

// The ranks a mismatch line blames, by count against the communicator's size: the listed ranks
// when they are fewer than half, the reference rank when the listed are more than half (they
// all differ from it), both on a tie or when the size is unknown.
std::vector<int> diag_odd_ranks(const DiagItem& item);

}  // namespace denpex::evidence
