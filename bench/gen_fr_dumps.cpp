// Writes a simulated job's Flight Recorder dumps for bench/fr_dumps.sh: RANKS files
// OUTDIR/nccl_trace_rank_<r>, each ENTRIES entries with FRAMES-frame stacks, in the pickle that
// torch's C++ pickler writes for FlightRecorder::dump (protocol 2; every string memoized and
// written once, then referenced; a frame dict shared by the entries whose stacks hold it, as
// getCollectiveTrace shares them). Two faults to find: rank 417 (or RANKS/2+17) records a
// different size at collective ENTRIES*3/4, and rank 803 (or RANKS-RANKS/5) stops 10
// collectives early.
//   denpex_bench_gen_fr_dumps OUTDIR RANKS ENTRIES FRAMES
// Prints the bytes written.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

class PickleWriter {
 public:
  std::string out;
  void op(char c) { out.push_back(c); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  }
  uint32_t put() {
    uint32_t id = next_++;
    if (id < 256) {
      op('q');
      out.push_back(static_cast<char>(id));
    } else {
      op('r');
      u32(id);
    }
    return id;
  }
  void get(uint32_t id) {
    if (id < 256) {
      op('h');
      out.push_back(static_cast<char>(id));
    } else {
      op('j');
      u32(id);
    }
  }
  void str(const std::string& s) {
    auto it = strings_.find(s);
    if (it != strings_.end()) return get(it->second);
    op('X');
    u32(static_cast<uint32_t>(s.size()));
    out += s;
    strings_[s] = put();
  }
  void integer(int64_t v) {
    if (v >= 0 && v < 256) {
      op('K');
      out.push_back(static_cast<char>(v));
    } else if (v >= 0 && v < 65536) {
      op('M');
      out.push_back(static_cast<char>(v));
      out.push_back(static_cast<char>(v >> 8));
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      op('J');
      u32(static_cast<uint32_t>(v));
    } else {
      op('\x8a');
      out.push_back(8);
      for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(static_cast<uint64_t>(v) >> (8 * i)));
    }
  }
  void floating(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    op('G');
    for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>(bits >> (8 * i)));
  }
  void boolean(bool b) { op(b ? '\x88' : '\x89'); }
  void none() { op('N'); }
  void begin_dict() { op('}'); op('('); }
  void end_dict() { op('u'); }
  void begin_list() { op(']'); op('('); }
  void end_list() { op('e'); }

 private:
  uint32_t next_ = 0;
  std::unordered_map<std::string, uint32_t> strings_;
};

struct Options {
  int ranks, entries, frames;
  int odd_rank() const { return ranks >= 1000 ? 417 : (ranks / 2 + 17) % ranks; }
  int behind_rank() const { return ranks >= 1000 ? 803 : ranks - ranks / 5; }
};

void sizes(PickleWriter& w, int64_t n) {
  w.begin_list();
  w.begin_list();
  w.integer(n);
  w.end_list();
  w.end_list();
}

void entry(PickleWriter& w, const Options& o, int rank, int seq, std::vector<int64_t>* frame_ids) {
  w.begin_dict();
  w.str("frames");
  w.begin_list();
  int site = seq % 8;
  for (int f = 0; f < o.frames; ++f) {
    int id = f < 5 ? site * 5 + f : 40 + f;  // 5 frames of the call site, then the common ones
    if ((*frame_ids)[static_cast<size_t>(id)] >= 0) {
      w.get(static_cast<uint32_t>((*frame_ids)[static_cast<size_t>(id)]));
      continue;
    }
    w.begin_dict();
    w.str("name");
    w.str(f == 0 ? "all_reduce" : "fn_" + std::to_string(id));
    w.str("filename");
    w.str(f == 0 ? "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py" : "/work/model/layer_" + std::to_string(id % 7) + ".py");
    w.str("line");
    w.integer(10 + id * 13);
    w.end_dict();
    (*frame_ids)[static_cast<size_t>(id)] = w.put();
  }
  w.end_list();
  auto kv_int = [&](const char* k, int64_t v) { w.str(k); w.integer(v); };
  kv_int("record_id", seq - 1);
  kv_int("pg_id", 0);
  w.str("process_group");
  w.str("0");
  w.str("default_pg");
  w.op('\x86');
  w.str("thread_name");
  w.str("pt_main_thread");
  w.str("thread_id");
  w.str("140000000000000");
  kv_int("collective_seq_id", seq);
  kv_int("p2p_seq_id", 0);
  kv_int("op_id", seq);
  w.str("profiling_name");
  w.str(seq % 10 == 0 ? "nccl:all_gather" : "nccl:all_reduce");
  kv_int("time_created_ns", 1733040000000000000LL + int64_t{seq} * 1000000);
  w.str("duration_ms");
  w.floating(1.5);
  int64_t n = 1024 * (1 + seq % 4);
  if (rank == o.odd_rank() && seq == o.entries * 3 / 4) n *= 2;
  w.str("input_sizes");
  sizes(w, n);
  w.str("input_dtypes");
  w.begin_list();
  w.str("BFloat16");
  w.end_list();
  w.str("output_sizes");
  sizes(w, n);
  w.str("output_dtypes");
  w.begin_list();
  w.str("BFloat16");
  w.end_list();
  bool last = seq == o.entries;
  w.str("state");
  w.str(last ? "started" : "completed");
  kv_int("time_discovered_started_ns", 1733040000000000000LL + int64_t{seq} * 1000000 + 100);
  w.str("time_discovered_completed_ns");
  if (last) w.none(); else w.integer(1733040000000000000LL + int64_t{seq} * 1000000 + 900);
  w.str("retired");
  w.boolean(!last);
  kv_int("timeout_ms", 600000);
  w.str("is_p2p");
  w.boolean(false);
  w.end_dict();
}

std::string dump(const Options& o, int rank) {
  PickleWriter w;
  w.op('\x80');
  w.out.push_back(2);
  w.begin_dict();
  w.str("version");
  w.str("2.4");
  w.str("pg_config");
  w.begin_dict();
  w.str("0");
  w.begin_dict();
  w.str("name");
  w.str("0");
  w.str("desc");
  w.str("default_pg");
  w.str("ranks");
  std::string ranks = "[";
  for (int r = 0; r < o.ranks; ++r) ranks += (r ? ", " : "") + std::to_string(r);
  w.str(ranks + "]");
  w.end_dict();
  w.end_dict();
  w.str("entries");
  w.begin_list();
  std::vector<int64_t> frame_ids(64 + static_cast<size_t>(o.frames), -1);
  int last = rank == o.behind_rank() ? o.entries - 10 : o.entries;
  for (int seq = 1; seq <= last; ++seq) entry(w, o, rank, seq, &frame_ids);
  w.end_list();
  w.end_dict();
  w.op('.');
  return w.out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s OUTDIR RANKS ENTRIES FRAMES\n", argv[0]);
    return 2;
  }
  Options o{std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4])};
  if (o.ranks < 2 || o.entries < 20 || o.frames < 6 || o.frames > 64) {
    std::fprintf(stderr, "RANKS >= 2, ENTRIES >= 20, FRAMES 6..64\n");
    return 2;
  }
  uint64_t total = 0;
  for (int r = 0; r < o.ranks; ++r) {
    std::string path = std::string(argv[1]) + "/nccl_trace_rank_" + std::to_string(r);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    std::string d = dump(o, r);
    if (!f || std::fwrite(d.data(), 1, d.size(), f) != d.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
    total += d.size();
  }
  std::printf("bytes=%llu\n", static_cast<unsigned long long>(total));
  return 0;
}
