#include "evidence/fr_analyse.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

namespace denpex::evidence {
namespace {

FrCallState call_state(FrState s) {
  switch (s) {
    case FrState::scheduled: return FrCallState::scheduled;
    case FrState::started: return FrCallState::started;
    case FrState::completed: return FrCallState::completed;
    case FrState::unknown: break;
  }
  return FrCallState::unknown;
}

void append_sizes(std::string* out, const std::vector<std::vector<int64_t>>& sizes) {
  out->push_back('[');
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) out->append(", ");
    out->push_back('[');
    for (size_t k = 0; k < sizes[i].size(); ++k) {
      if (k) out->append(", ");
      out->append(std::to_string(sizes[i][k]));
    }
    out->push_back(']');
  }
  out->push_back(']');
}

void append_names(std::string* out, const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out->append(",");
    out->append(names[i]);
  }
  if (names.empty()) out->append("-");
}

std::string base_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A frame of torch's own code (the collective's wrappers), not the caller's.
bool torch_frame(const FrFrame& f) {
  return f.filename.find("/torch/") != std::string::npos || f.filename.find("torch/csrc") != std::string::npos;
}

// "step (train.py:42) < main (train.py:80)": the first three frames of the caller's code,
// innermost first (torch's own frames when there is nothing else).
std::string stack_summary(const FrDump& d, const std::vector<uint32_t>& frames) {
  std::string out;
  int shown = 0;
  for (int pass = 0; pass < 2 && shown == 0; ++pass) {
    for (uint32_t id : frames) {
      if (id >= d.frames.size() || shown == 3) break;
      const FrFrame& f = d.frames[id];
      if (pass == 0 && torch_frame(f)) continue;
      out += fmt::format("{}{} ({}:{})", shown ? " < " : "", f.name, base_name(f.filename), f.line);
      ++shown;
    }
  }
  return out;
}

}  // namespace

uint32_t FrJobBuilder::stack_id(const FrDump& d, const FrEntry& e,
                                std::unordered_map<std::string, uint32_t>* cache) {
  key_.assign(reinterpret_cast<const char*>(e.frames.data()), e.frames.size() * sizeof(uint32_t));
  auto it = cache->find(key_);
  if (it != cache->end()) return it->second;
  uint32_t id = job_.strings.id(stack_summary(d, e.frames));
  cache->emplace(key_, id);
  return id;
}

bool FrJobBuilder::add(const FrDump& d, std::string* why) {
  if (d.rank < 0) {
    *why = fmt::format("{}: its name ends in no rank number (torch names a dump "
                       "<TORCH_NCCL_DEBUG_INFO_TEMP_FILE><rank>): rename it, e.g. to "
                       "nccl_trace_rank_<rank>", d.source);
    return false;
  }
  if (std::binary_search(job_.dumped_ranks.begin(), job_.dumped_ranks.end(), d.rank)) {
    *why = fmt::format("{}: a second dump of rank {}: give each rank's dump once", d.source, d.rank);
    return false;
  }
  job_.dumped_ranks.insert(std::upper_bound(job_.dumped_ranks.begin(), job_.dumped_ranks.end(), d.rank), d.rank);
  for (const FrProcessGroup& pg : d.pg_config) world_.insert(world_.end(), pg.ranks.begin(), pg.ranks.end());
  std::unordered_map<std::string, uint32_t> stacks;
  std::unordered_map<std::string, size_t> mine;  // group -> index of this rank's calls in it
  std::string text;
  for (const FrEntry& e : d.entries) {
    auto [git, fresh] = group_index_.emplace(e.pg_name, job_.groups.size());
    if (fresh) {
      FrGroup g;
      g.name = e.pg_name;
      g.desc = e.pg_desc;
      for (const FrProcessGroup& pg : d.pg_config)
        if (pg.name == e.pg_name) g.expected = pg.ranks;
      job_.groups.push_back(std::move(g));
    }
    FrGroup& g = job_.groups[git->second];
    auto [mit, first] = mine.emplace(e.pg_name, g.ranks.size());
    if (first) g.ranks.push_back(FrRankCalls{d.rank, d.source, {}, {}});
    FrCall c;
    c.seq = e.is_p2p ? e.p2p_seq_id : e.collective_seq_id;
    c.time_ns = e.time_created_ns;
    c.op = job_.strings.id(e.profiling_name);
    text.clear();
    append_sizes(&text, e.input_sizes);
    text += " -> ";
    append_sizes(&text, e.output_sizes);
    c.shapes = job_.strings.id(text);
    text.clear();
    append_names(&text, e.input_dtypes);
    text += " -> ";
    append_names(&text, e.output_dtypes);
    c.dtypes = job_.strings.id(text);
    c.stack = stack_id(d, e, &stacks);
    c.record_id = static_cast<int32_t>(e.record_id);
    c.state = call_state(e.state);
    c.retired = e.retired;
    (e.is_p2p ? g.ranks[mit->second].p2p : g.ranks[mit->second].collectives).push_back(c);
  }
  return true;
}

FrJobDumps FrJobBuilder::finish() {
  auto by_seq = [](const FrCall& a, const FrCall& b) { return a.seq < b.seq; };
  for (FrGroup& g : job_.groups) {
    std::sort(g.ranks.begin(), g.ranks.end(),
              [](const FrRankCalls& a, const FrRankCalls& b) { return a.rank < b.rank; });
    for (FrRankCalls& r : g.ranks) {
      std::stable_sort(r.collectives.begin(), r.collectives.end(), by_seq);
      std::stable_sort(r.p2p.begin(), r.p2p.end(), by_seq);
    }
  }
  std::sort(world_.begin(), world_.end());
  world_.erase(std::unique(world_.begin(), world_.end()), world_.end());
  job_.world = std::move(world_);
  FrJobDumps out = std::move(job_);
  job_ = FrJobDumps();
  group_index_.clear();
  world_.clear();
  return out;
}

namespace {

void add_dump(const FrDump& d, FrJobBuilder* b, FrAnalysis* out) {
  if (d.status != FrDump::Status::ok) {
    out->problems.push_back(d.message);
    if (d.cut.why != InputCut::Why::none) out->cuts.push_back(d.cut);
    return;
  }
  std::string why;
  if (!b->add(d, &why)) {
    out->problems.push_back(why);
    return;
  }
  ++out->dumps;
  out->entries += d.entries.size();
  out->bytes += d.bytes;
  for (const std::string& w : d.warnings) out->warnings.push_back(fmt::format("{}: {}", d.source, w));
  if (d.unreadable > 0)
    out->warnings.push_back(fmt::format("{}: {} record{} not read: a number out of range (first: {})", d.source,
                                        d.unreadable, d.unreadable == 1 ? "" : "s", d.unreadable_samples.front()));
  out->unreadable += d.unreadable;
  for (const std::string& u : d.unreadable_samples)
    if (out->unreadable_samples.size() < kFrUnreadableSamples)
      out->unreadable_samples.push_back(FrEvidence{d.source, -1, u});
}

}  // namespace

namespace {

FrDump read_path(const std::string& p, const PickleLimits& limits, const DecodeLimits& decode) {
  OpenedInput in = open_input(p, decode);
  if (in.status != OpenedInput::Status::ok) {
    FrDump d;
    d.source = p;
    d.status = FrDump::Status::malformed;
    d.message = in.message;
    d.cut = in.cut;
    return d;
  }
  return read_fr_dump(in.source.get(), p, limits);
}

// Dumps read by worker threads, handed out in path order.
class ParallelReader {
 public:
  ParallelReader(const std::vector<std::string>& paths, const PickleLimits& limits, const DecodeLimits& decode)
      : paths_(paths), limits_(limits), decode_(decode), slots_(paths.size()) {}
  ~ParallelReader() {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  ParallelReader(const ParallelReader&) = delete;
  ParallelReader& operator=(const ParallelReader&) = delete;

  // False when no thread could be started (the caller reads alone).
  bool start(unsigned n) {
    try {
      for (unsigned i = 0; i < n; ++i) workers_.emplace_back([this] { work(); });
    } catch (const std::system_error&) {
    }
    return !workers_.empty();
  }
  FrDump take(size_t i) {
    std::unique_lock<std::mutex> g(m_);
    cv_.wait(g, [&] { return slots_[i].has_value(); });
    FrDump d = std::move(*slots_[i]);
    slots_[i].reset();
    held_ -= held_bytes(d);
    taken_ = i + 1;
    cv_.notify_all();
    return d;
  }

 private:
  static constexpr size_t kAhead = 8;
  // What a read dump holds, near enough: its records and the text it was read from.
  static uint64_t held_bytes(const FrDump& d) {
    return d.bytes + d.entries.capacity() * sizeof(FrEntry) + d.frames.capacity() * sizeof(FrFrame);
  }
  // The next dump may be read: it is the one the caller waits for, or within the count and bytes
  // the reader holds ahead.
  bool may_read_next() const { return next_ == taken_ || (next_ < taken_ + kAhead && held_ <= kHeldDumpBytes); }
  void work() {
    for (;;) {
      size_t i;
      {
        std::unique_lock<std::mutex> g(m_);
        cv_.wait(g, [&] { return stop_ || next_ >= paths_.size() || may_read_next(); });
        if (stop_ || next_ >= paths_.size()) return;
        i = next_++;
      }
      FrDump d = read_path(paths_[i], limits_, decode_);
      {
        std::lock_guard<std::mutex> g(m_);
        held_ += held_bytes(d);
        slots_[i] = std::move(d);
      }
      cv_.notify_all();
    }
  }
  const std::vector<std::string>& paths_;
  const PickleLimits& limits_;
  const DecodeLimits& decode_;
  std::vector<std::optional<FrDump>> slots_;
  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable cv_;
  size_t next_ = 0, taken_ = 0;
  uint64_t held_ = 0;  // bytes of the dumps read and not yet taken
  bool stop_ = false;
};

}  // namespace

FrAnalysis analyse_fr_dumps(const std::vector<std::string>& paths, const PickleLimits& limits,
                            unsigned threads, const DecodeLimits& decode) {
  FrAnalysis out;
  FrJobBuilder b;
  ParallelReader reader(paths, limits, decode);
  bool parallel = threads > 1 && paths.size() > 1 && reader.start(threads);
  for (size_t i = 0; i < paths.size(); ++i)
    add_dump(parallel ? reader.take(i) : read_path(paths[i], limits, decode), &b, &out);
  out.judgement = judge_fr_dumps(b.finish());
  return out;
}

FrAnalysis analyse_fr_dumps(const std::vector<FrDump>& dumps) {
  FrAnalysis out;
  FrJobBuilder b;
  for (const FrDump& d : dumps) add_dump(d, &b, &out);
  out.judgement = judge_fr_dumps(b.finish());
  return out;
}

}  // namespace denpex::evidence
