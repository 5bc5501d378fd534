// One PyTorch Flight Recorder dump: the file a rank writes to TORCH_NCCL_DEBUG_INFO_TEMP_FILE
// (TORCH_FR_DUMP_TEMP_FILE) + its rank when a collective times out, or the JSON that
// torch._C._distributed_c10d._dump_nccl_trace_json returns. Read from the pickle (evidence/
// pickle.h: nothing executed) or the JSON into plain structs, by field name, so that versions
// that add fields read the same; fields are those of torch's FlightRecorder (dump_entries,
// getCollectiveTrace, getPgConfig, getPgStatus).
//
// The JSON form is read with nlohmann's SAX parser straight into these structs, streamed from
// its source: no document tree is built (a 61 KB gzip'd dump took 3.4 GB as one), and nothing is
// sized by a count the input states. What the reader keeps is charged as it is allocated (each
// vector's growth, spare capacity included, each string past the short-string buffer, each
// distinct frame), and a dump that would keep more than PickleLimits::max_kept_per_byte (4)
// bytes per byte of JSON read, plus kept_slack_bytes (1 MiB), is refused as too_large. Dumps as
// torch writes them keep 1.2 to 2 bytes per byte (20,000 compact entries without stacks, the
// densest form; stacks add text, not records); a list of bare "0," dimensions keeps 8 and more.
// So a JSON dump of B bytes holds at most 4 B + 1 MiB, and at most twice that for the moment a
// vector moves to a larger allocation, plus the parser's longest string and a 64 KiB buffer.
// A pickle is read whole and bounded by PickleLimits (pickle.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "evidence/input_source.h"
#include "evidence/pickle.h"

namespace denpex::evidence {

struct FrFrame {
  std::string name;      // function
  std::string filename;
  int64_t line = -1;
};

enum class FrState { unknown, scheduled, started, completed };
const char* to_string(FrState s);

struct FrEntry {
  int64_t record_id = -1;
  std::string pg_id;            // the process group's number in this process ("0", "1", ...)
  std::string pg_name;          // process_group[0]: the group's name, shared by its ranks
  std::string pg_desc;          // process_group[1]: "default_pg", "undefined", ...
  int64_t collective_seq_id = -1;
  int64_t p2p_seq_id = -1;
  int64_t op_id = -1;
  std::string profiling_name;   // "nccl:all_reduce", "gloo:broadcast", ...
  std::vector<std::vector<int64_t>> input_sizes, output_sizes;
  std::vector<std::string> input_dtypes, output_dtypes;
  FrState state = FrState::unknown;
  bool is_p2p = false;
  bool retired = false;
  int64_t time_created_ns = -1;
  int64_t time_started_ns = -1;    // time_discovered_started_ns, -1 if none
  int64_t time_completed_ns = -1;  // time_discovered_completed_ns, -1 if none
  double duration_ms = -1;
  int64_t timeout_ms = -1;
  std::vector<uint32_t> frames;    // into FrDump::frames, innermost first
};

struct FrProcessGroup {
  std::string name;        // pg_config key: the group's name
  std::string desc;
  std::vector<int> ranks;  // global ranks, from the "ranks" text ("[0, 1, 2]")
};

struct FrPgStatus {
  std::string pg_id;
  int64_t last_enqueued = -1, last_started = -1, last_completed = -1;
};

struct FrDump {
  enum class Status {
    ok,         // read; `warnings` may say what was skipped
    refused,    // the pickle holds something outside the safe subset (nothing was run)
    malformed,  // not a dump: truncated pickle or JSON, or no entries/version where a dump has them
    too_large,  // past the pickle reader's limits
  };
  Status status = Status::malformed;
  std::string message;      // one line naming the file and what to do, when not ok
  std::string source;       // file name
  std::string format;       // "pickle" or "json"
  int rank = -1;            // from the file name's trailing number (how torch names dumps), -1 if none
  std::string version;      // the dump's "version" ("2.4", "2.10"...)
  bool version_known = false;  // 2.0 to 2.10: the versions whose fields this reader knows
  std::string comm_lib_version;
  std::vector<FrProcessGroup> pg_config;
  std::vector<FrPgStatus> pg_status;
  std::vector<FrEntry> entries;  // in recording order
  std::vector<FrFrame> frames;   // each distinct frame once
  std::vector<std::string> warnings;
  uint64_t bytes = 0;            // bytes of the dump read
  // Records not kept (entries, process groups, statuses) because a number in them is out of
  // range (fr_fields.h), and the first few of them: "entry 3: record_id 4294967296 is out of range".
  long long unreadable = 0;
  std::vector<std::string> unreadable_samples;
  // The source ended early (a damaged or limited compressed dump): status malformed, not read,
  // since a dump read in part would show its rank behind where it was.
  InputCut cut;
};

constexpr size_t kFrUnreadableSamples = 5;

// Reads a whole dump from `bytes` (a pickle when it starts with PROTO, else JSON). `name` is the
// file name used in messages and for the rank. Never throws; statuses as above (too_large also
// for a JSON dump past max_input_bytes or past the bound on what is kept).
FrDump read_fr_dump(std::string_view bytes, const std::string& name,
                    const PickleLimits& limits = PickleLimits{});

// Reads the source (at most limits.max_input_bytes): a pickle whole, then as above; JSON streamed
// through the SAX reader. A source that breaks off, or ends early (`cut` set), is malformed with
// its message.
FrDump read_fr_dump(ByteSource* source, const std::string& name,
                    const PickleLimits& limits = PickleLimits{});

// The rank a dump's file name gives: its trailing decimal number ("nccl_trace_rank_12" -> 12,
// "rank3.json" -> 3), -1 when it has none.
int rank_from_dump_name(const std::string& name);

}  // namespace denpex::evidence
