// Initiating versus collateral: which rank's failure started it, which only followed, and
// whether the launcher's "first observed failure" is right. Pure logic over the events the
// readers found; unit-tested without files.
//
// Rules:
//  - a rank whose installation differs from the others (an NCCL version, plugin or ABI finding
//    from compare/'s rules) initiates: the NCCL errors every rank then raises follow from it;
//    where no value has a majority (two nodes, two versions) its sides are named as disagreeing;
//  - otherwise a rank with its own error (an exception from its code, out of memory, a CUDA/NCCL error)
//    initiates; among several, the earliest by timestamp, then the most specific (OOM and
//    library errors before generic exceptions), then the first in the input; two stamps of
//    different hosts closer than the clock skew the logs show (clock_skew_us) are not an order:
//    there, and at equal times, a rank that also only waited (a timeout, an abort) follows one
//    that did not; NCCL's own cause line ("Last error:") stands for its process's general error;
//  - a fault of a node or the fabric (NET/IB completion errors, NVLS) that processes on several
//    hosts met alike, none distinguishably first, blames nobody: it is named as such; so does a
//    timeout of the fabric (NET/IB retries exceeded) with no process's own error before it;
//  - without any own error, a rank that never reached the collective the others time out in
//    (desync report, flight recorder, a rank whose collective sequence diverged) initiates;
//    sides of a divergence with no majority (two ranks compared) are named as disagreeing, and
//    neither initiates;
//  - a process whose line says its peer went away (a connection closed or reset by the far end,
//    a flushed receive) only followed, and so did the errors it raised after that line; when no
//    process of the input has an error of its own, the peer those lines name (an address or a
//    host) is named as the one that went away first;
//  - workers of one file that its launcher saw end alike (the same exit code of their own), whose
//    lines name none of them, failed alike: nobody is blamed;
//  - ranks that time out, are aborted or are killed by their launcher are collateral;
//  - the launcher's claim (torchrun "Root Cause (first observed failure)") is compared with it;
//    a launcher's word alone names a worker only when nothing contradicts it: an abort (SIGABRT)
//    where the input holds watchdog timeouts, or any exit of a rank whose own lines show it timing
//    out, is what the timeout did, not proof that worker failed first.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "evidence/events.h"
#include "evidence/log_reader.h"

// The room's typed events, under the names diagnose/ has always used.
namespace denpex::diag {
using evidence::CollResult;
using evidence::Evidence;
using evidence::Fact;
using evidence::Failure;
using evidence::LauncherEntry;
using evidence::LogReader;
using evidence::Reported;
using evidence::Unreadable;
using evidence::WatchRecord;
using evidence::When;
using evidence::Who;
}  // namespace denpex::diag

namespace denpex::diag {

struct Party {
  std::vector<int> ranks;          // sorted, no duplicates
  std::vector<std::string> hosts;  // sorted, no duplicates
  std::vector<std::string> procs;  // processes whose rank is unknown ("node01:1234")
  std::string what;
  When when;
  std::string hint;                // OOM: the allocator setting the message suggests
  Failure::Kind kind = Failure::Kind::own_error;
  std::vector<Evidence> evidence;  // at most a few
  // When each process of the party failed, where its lines give a time ("rank 3", "node01:1234").
  std::map<std::string, When> failed_at;
  // The far end that the other processes' lines say went away, named by the address or host
  // they give (in procs and hosts): no process of the input, whose own error is not in it.
  bool peer = false;
};

// A collective divergence found by the analyser, as a candidate initiator.
struct Divergence {
  std::vector<int> ranks;
  std::vector<std::string> hosts;
  std::vector<std::string> procs;  // processes whose rank is unknown
  std::string what;
  std::vector<Evidence> evidence;
  // Every side of the comparison is named (two ranks, or no majority): the sides disagree and
  // none is shown to be the odd one, so none is a candidate initiator.
  bool tie = false;
};

struct BlameResult {
  bool found = false;              // an initiating party was identified
  Party initiating;
  // A fault of the node or the fabric that several processes met alike, none of them
  // distinguishably first: named, nobody blamed (found stays false).
  bool have_alike = false;
  Party alike;
  long long skew_us = 0;           // the clock skew between hosts the logs show (clock_skew_us)
  std::string skew_note;           // one sentence when the skew decided who initiated
  std::vector<Party> collateral;   // one per way of failing
  bool have_claim = false;
  // Sides of a divergence with no majority, named as disagreeing when nobody initiated (never
  // under "Started by": the input does not show which side went wrong).
  std::vector<Party> disagreeing;
  Party claim;                     // the launcher's root cause
  bool claim_wrong = false;        // the claim names a rank that did not initiate
  std::string claim_note;          // one sentence when wrong
  // Why an initiating party that was found is not named (found is then false): a failure in
  // an input cut before its time could have come first (diagnose/input_cuts.h). "" when none.
  std::string withheld;
};

// How far the hosts' clocks disagree, as the logs themselves show it, in microseconds (a rank
// whose host is unknown keeps its file's clock): ranks on two hosts that time out in the same work (process group and SeqNum) entered it together, so
// the start their lines give (the stamp less "ran for N milliseconds") differs between hosts by
// the offset of their clocks, plus how far apart they entered it. The largest such difference
// over every work and pair of hosts; 0 when no two hosts can be compared.
long long clock_skew_us(const std::vector<Failure>& failures);

// Never fails; no failures and no divergence gives found == false.
BlameResult assign_blame(const std::vector<Failure>& failures, const std::vector<LauncherEntry>& launcher,
                         const std::vector<Divergence>& divergences,
                         const std::vector<Divergence>& environment = {});

// "rank 6 on node02", "ranks 0-3 on node01", "process node01:1234", "the peer at 10.0.0.7".
std::string party_subject(const Party& p);

}  // namespace denpex::diag
