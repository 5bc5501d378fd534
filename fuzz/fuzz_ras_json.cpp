// libFuzzer target: the NCCL RAS JSON reader (evidence/ras_json.h: nlohmann's SAX parser
// straight into RasReport) and its judge, from memory and streamed from a source in pieces of
// every size: any input is read or refused with a message, never wraps a number, and keeps
// within the bound on what it holds. Seeds: NCCL's own output (the fixtures) and hostile shapes.
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <string>

#include "evidence/input_source.h"
#include "evidence/line_repair.h"
#include "evidence/ras_json.h"

namespace {

// A source that hands out at most `piece` bytes per read, so the parser's buffer is refilled at
// every point of the document.
class PieceSource : public denpex::evidence::ByteSource {
 public:
  PieceSource(std::string bytes, size_t piece) : bytes_(std::move(bytes)), piece_(piece) {}
  long read(char* buf, size_t cap, std::string*) override {
    size_t n = std::min({cap, piece_, bytes_.size() - pos_});
    bytes_.copy(buf, n, pos_);
    pos_ += n;
    return static_cast<long>(n);
  }

 private:
  std::string bytes_;
  size_t piece_;
  size_t pos_ = 0;
};

void check(const denpex::evidence::RasReport& r) {
  using denpex::evidence::RasReport;
  if (r.status != RasReport::Status::ok && (r.message.empty() || !r.communicators.empty())) std::abort();
  for (const auto& c : r.communicators) {
    if (c.size < -1 || c.size > denpex::evidence::kMaxRank) std::abort();
    for (const auto& k : c.ranks) {
      if (k.rank < -1 || k.rank >= denpex::evidence::kMaxRank) std::abort();
      for (const auto& n : k.counts)
        if (n.op >= r.ops.size()) std::abort();
    }
    for (const auto& m : c.missing)
      if (m.rank < -1 || m.rank >= denpex::evidence::kMaxRank) std::abort();
  }
  (void)denpex::evidence::judge_ras(r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  denpex::evidence::RasLimits limits;
  limits.kept_slack_bytes = 64 * 1024;  // a small slack, so the bound on what is kept is reached
  denpex::evidence::RasReport whole = denpex::evidence::read_ras_json(bytes, "ras.json", limits);
  check(whole);
  PieceSource source(bytes, 1 + data[0] % 64);
  denpex::evidence::RasReport streamed = denpex::evidence::read_ras_json(&source, "ras.json", limits);
  check(streamed);
  // Read whole or in pieces, a document both read reads the same. (The bound on what is kept
  // follows the bytes read so far, so streamed it may refuse a document a whole read keeps.)
  using Status = denpex::evidence::RasReport::Status;
  if (whole.status == Status::ok && streamed.status == Status::ok &&
      (whole.communicators.size() != streamed.communicators.size() || whole.unreadable != streamed.unreadable))
    std::abort();
  return 0;
}
