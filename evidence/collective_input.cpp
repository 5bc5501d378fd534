#include "evidence/collective_input.h"

#include <fmt/format.h>

namespace denpex {

void note_unreadable(CollectiveInput* in, long long line_no, const std::string& text) {
  ++in->unreadable;
  if (in->unreadable_samples.size() < kMaxUnreadableSamples)
    in->unreadable_samples.push_back(fmt::format("{}:{}: {}", in->path, line_no, text.substr(0, 200)));
}

}  // namespace denpex
