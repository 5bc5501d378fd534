// NCCL COLL calls, streamed: holds only what is still to compare, and hands the one collective
// analyser (compare/collectives.h) the part of each communicator where ranks disagree, end early
// or are still unsettled.
//
// A position of a communicator (NCCL's opCount, or the call's order when the line has none) is
// settled once every rank seen so far has passed it and all that logged it made the same call:
// the call is kept once as the reference (a few dozen bytes per position), the ranks' copies are
// dropped. Memory therefore grows with ranks x calls not yet settled, plus one call per
// position, not with the number of lines.
//
// A rank without a position that it passed (its opCount jumps from 5 to 7) lost that line (a
// cut paste, a dropped write): it is counted, never blamed. A rank that stops while the others
// go on is a rank that ended early: its sequence goes to the analyser, which reports it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compare/collectives.h"

namespace denpex::evidence {

// 48 bytes, members ordered for packing: `collectives` holds every call of a log.
struct CollCall {
  long long pos = -1;               // opCount; -1: the next after this rank's previous call
  unsigned long long count = 0;
  long long line = 0;               // input line, for evidence
  int file = 0;                     // input file index
  int datatype = -1;
  int redop = -1;
  int root = -1;
  int peer = -1;
  CollKind kind = CollKind::unknown;
};

// Who a member is, resolved when the stream is finished (a rank learned late still counts).
struct MemberIdentity {
  int global_rank = -1;
  std::string host;
  long long pid = -1;
  std::string name;   // "host:pid", for messages when no rank is known
};

struct CommStats {
  std::string comm;
  int nranks = -1;
  int members = 0;
  long long settled = 0;                 // positions settled as agreeing
  std::map<std::string, long long> lost; // member name -> lines lost (opCount gaps)
  std::vector<std::pair<int, long long>> lost_after;  // (file, line) of calls right after a gap
  long long dropped = 0;                 // calls not kept after a divergence (beyond the window)
  bool ref_trimmed = false;              // the oldest references were dropped (very long log)
  int excerpts = 0;                      // members left out: too short an excerpt that ends early
};

// The analyser's input plus what translates its answers back: `positions[comm][i]` is the
// communicator position (opCount) of the i-th collective the analyser saw.
struct CollResult {
  std::vector<CommSequence> sequences;
  std::map<std::string, std::vector<long long>> positions;
  std::vector<CommStats> stats;
  std::map<std::string, std::vector<int>> synthetic;  // comm -> members whose rank in the comm is unknown
};

class CollStream {
 public:
  // Index of communicator `id` (created on first use). nranks < 0 when unknown.
  int comm(const std::string& id, int nranks);
  // Index of the member of `comm` that is process `proc` (the caller's process index).
  // rank_in_comm < 0 when unknown (no Init COMPLETE line).
  int member(int comm, int proc, int rank_in_comm);
  void add(int comm, int member, const CollCall& call);
  // Input `file` ended early (damaged, or past a decoding limit): a member whose calls end in it
  // ends where reading stopped, which is not where the rank did (CommSequence::cut).
  void mark_cut(int file) { cut_files_.insert(file); }

  // Ends the stream. `identity` maps the caller's process index to who it is. Never fails.
  CollResult finish(const std::function<MemberIdentity(int proc)>& identity,
                    const std::vector<std::string>& files);

  long long buffered() const { return buffered_; }

 private:
  struct Member {
    int proc = -1;
    int rank_in_comm = -1;
    std::deque<CollCall> queue;        // unsettled calls, ascending pos
    std::vector<CollCall> p2p;         // Send/Recv, in order (not settled: matched pairwise)
    long long next_pos = 0;            // position of a call without opCount
    long long done_upto = 0;           // positions below are settled or lost for this member
    bool stalled = false;              // ended while others went on (maybe only for now)
    long long first_pos = -1;          // first position this member logged
    long long compared = 0;            // settled positions it shared with at least one other
    std::vector<long long> lost;       // positions this member lost (first few kept)
    std::vector<std::pair<int, long long>> lost_after;  // (file, line) of the call after a gap
    long long lost_count = 0;
    int last_file = -1;                // the input of its last call
  };
  struct Comm {
    std::string id;
    int nranks = -1;
    std::vector<Member> members;
    std::map<int, int> by_proc;
    std::deque<CollCall> ref;          // settled reference calls, ascending pos
    long long frontier = 0;
    int empty_active = 0;              // members neither stalled nor holding a call: settle waits
    bool frozen = false;
    long long frozen_at = -1;
    long long settled = 0;
    long long dropped = 0;
    bool ref_trimmed = false;
  };
  void settle(Comm& c);
  const CollCall* ref_at(const Comm& c, long long pos) const;

  // finish(), one communicator at a time: its counts and members' names; where the analyser
  // starts; each member's calls by position; members whose log is only an excerpt; the positions
  // every member can be compared at; one member's sequence.
  using CallTable = std::vector<std::map<long long, const CollCall*>>;
  static CommStats comm_stats(const Comm& c, const std::function<MemberIdentity(int proc)>& identity,
                              std::vector<MemberIdentity>* ids);
  static long long analysis_start(const Comm& c);
  static void call_table(const Comm& c, long long start, CallTable* table, std::set<long long>* positions);
  static std::vector<bool> excerpts(const Comm& c, const std::set<long long>& positions, CallTable* table);
  static std::vector<long long> comparable(const Comm& c, const CallTable& table, const std::set<long long>& positions,
                                           const std::vector<MemberIdentity>& ids, CommStats* st);
  static CommSequence member_sequence(const Comm& c, size_t i, const CallTable& table, const std::vector<long long>& kept,
                                      const MemberIdentity& id, const std::vector<std::string>& files, CollResult* out);

  std::vector<Comm> comms_;
  std::map<std::string, int> comm_index_;
  long long buffered_ = 0;
  std::set<int> cut_files_;
};

// CollectiveCall::trace_seq of the calls handed to the analyser: input file and line in one
// number (file << 40 | line).
inline long long encode_line(int file, long long line) { return (static_cast<long long>(file) << 40) | line; }
inline int decoded_file(long long trace_seq) { return static_cast<int>(trace_seq >> 40); }
inline long long decoded_line(long long trace_seq) { return trace_seq & ((1LL << 40) - 1); }

// The call as compare/collectives' analyser takes it; the arguments a kind does not have are -1.
CollectiveCall to_collective_call(const CollCall& c, long long trace_seq);

// Equality of what must agree across ranks (buffers and streams are process-local).
bool same_call(const CollCall& a, const CollCall& b);

}  // namespace denpex::evidence
