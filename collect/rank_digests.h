// What every transport moves and rank 0 keeps, whatever carries it (MPI messages, torchrun's
// store): each rank's 64-bit configuration digest and host name, and one full record per
// distinct digest. Rank 0 keeps 16 bytes per rank and each distinct host name once.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compare/group.h"
#include "compare/judge.h"
#include "probe/record.h"

namespace denpex {

// A host name is at most 255 bytes; the reason of a failed probe is cut so the message fits.
constexpr size_t kMaxDigestMessage = 8 + 256 + 768;

// 8 digest bytes (host order), the host name, and for digest 0 ("my probe failed") '\n' and
// the reason; at most kMaxDigestMessage bytes.
std::string digest_message(uint64_t digest, const std::string& host, const std::string& failure);

struct DigestMessage {
  bool malformed = false;      // shorter than 8 bytes
  uint64_t digest = 0;
  std::string_view host;       // points into the message
  std::string failure;         // digest 0 only
};

// Never fails: a message shorter than 8 bytes is `malformed`.
DigestMessage parse_digest_message(std::string_view message);

// Each distinct host name once, with stable addresses: 1M ranks on 125,000 hosts keep 125,000
// strings.
class HostNames {
 public:
  uint32_t intern(std::string_view host);
  const std::string& operator[](uint32_t id) const { return names_[id]; }

 private:
  std::deque<std::string> names_;
  std::unordered_map<std::string_view, uint32_t> ids_;
};

struct ReportedRank {   // 16 bytes per rank at rank 0
  int32_t rank;
  uint32_t host;        // HostNames id
  uint64_t digest;      // 0: its probe failed
};

// The lowest rank of each non-zero digest: the rank whose record represents it.
std::map<uint64_t, int> representatives(const std::vector<ReportedRank>& reported);

// One group per record in *records (moved out), holding every reported rank with its digest;
// a rank whose digest has no record becomes a MissingRank ("its record did not arrive or was
// unreadable"). Ranks with digest 0 are skipped (the caller reports them with their reason).
// Groups are not normalized.
void group_reported(const std::vector<ReportedRank>& reported, const HostNames& hosts,
                    std::map<uint64_t, RankRecord>* records, std::vector<ConfigGroup>* groups,
                    std::vector<MissingRank>* missing);

}  // namespace denpex
