// Horovod's stall inspector: "name [missing ranks: 2, 5]" names the ranks that did not submit;
// the older "name [ready ranks: 5, 6, 3, 1, 4, 0]" names those that did. One line may list many
// stalled tensors (the old form prints every one on one line): each is read.
//
// Ready lists are judged together at the end of the report: a rank absent from one list may
// only be late for that tensor, while a rank absent from most lists is the one the others wait
// for. When the ranks that wait are themselves alone ready for a tensor the others never
// submitted, they are on another path (a rank-dependent branch), not merely slow.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "evidence/families.h"
#include "evidence/log_reader.h"

namespace denpex::evidence {

namespace {

constexpr size_t kMaxReadyLists = 1024;

void open_report(const Hit& hit, Record& rec) {
  FileState& st = rec.st;
  Reported& r = st.horovod_report;
  r = Reported();
  r.kind = Reported::Kind::missing_ranks;
  r.who = rec.r.who_of(rec.proc);
  r.evidence = rec.r.evidence(st, rec.text);
  r.evidence.signal = hit.signal->id;
  r.op = std::string(cut(hit.get(Field::name), 120));
  st.horovod = true;
}

// One "name [... ranks: list]" of the line.
void read_one(const Hit& hit, FileState& st) {
  std::vector<int> ranks = int_list(hit.get(Field::ranks));
  Reported& r = st.horovod_report;
  if (hit.signal->kind == "missing") {
    for (int k : ranks)
      if (std::find(r.ranks.begin(), r.ranks.end(), k) == r.ranks.end()) r.ranks.push_back(k);
    r.detail = "Horovod stall report: missing ranks";
    return;
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  if (!ranks.empty()) r.world = std::max(r.world, ranks.back() + 1);
  if (st.ready_lists.size() < kMaxReadyLists) {
    st.ready_lists.push_back(std::move(ranks));
    st.ready_ops.emplace_back(cut(hit.get(Field::name), 120));
  }
}

bool ready(const std::vector<int>& list, int k) { return std::binary_search(list.begin(), list.end(), k); }

// The ranks absent from the most ready lists (every list, when there is one), with why.
void judge_ready_lists(const FileState& st, Reported* rep) {
  const auto& lists = st.ready_lists;
  // How many lists each rank is in: a rank below the highest named that is in none is absent
  // from all of them.
  std::map<int, size_t> in;
  for (const auto& l : lists)
    for (int k : l) ++in[k];
  const int world = rep->world;
  size_t most = 0;
  for (int k = 0; k < world && most < lists.size(); ++k) {
    auto it = in.find(k);
    most = std::max(most, lists.size() - (it == in.end() ? 0 : it->second));
  }
  if (most == 0) return;
  for (int k = 0; k < world; ++k) {
    auto it = in.find(k);
    if (lists.size() - (it == in.end() ? 0 : it->second) == most) rep->ranks.push_back(k);
  }
  // The first tensor they did not submit names the report; one they alone submitted says they
  // took another path.
  auto first_absent = std::find_if(lists.begin(), lists.end(), [&](const auto& l) { return !ready(l, rep->ranks[0]); });
  rep->op = st.ready_ops[static_cast<size_t>(first_absent - lists.begin())];
  rep->detail = most == lists.size() ? std::string("absent from every ready list")
                                     : fmt::format("absent from {} of the {} ready lists", most, lists.size());
  for (size_t i = 0; i < lists.size(); ++i) {
    bool theirs = !lists[i].empty() && std::all_of(lists[i].begin(), lists[i].end(), [&](int k) {
      return std::binary_search(rep->ranks.begin(), rep->ranks.end(), k);
    });
    if (!theirs) continue;
    rep->detail += fmt::format("; they alone submitted {}, which the ranks waiting for them never did: they took "
                               "another path",
                               st.ready_ops[i]);
    break;
  }
}

}  // namespace

void read_horovod(const Hit& hit, Record& rec) {
  FileState& st = rec.st;
  if (!st.horovod) open_report(hit, rec);
  ++rec.r.records;
  read_one(hit, st);
  // The line's later tensors: the entry's pattern again, from where the last match ended.
  std::string_view text = hit.text;
  std::string_view list = hit.get(Field::ranks);
  size_t at = static_cast<size_t>(list.data() - text.data()) + list.size();
  Hit more;
  for (int n = 0; n < 4096 && at < text.size(); ++n) {
    if (!rec.r.matcher().match_entry(hit.index, text.substr(at), &more)) break;
    read_one(more, st);
    std::string_view l = more.get(Field::ranks);
    at = static_cast<size_t>(l.data() - text.data()) + l.size();
  }
}

void horovod_finish(LogReader& r, FileState& st) {
  if (!st.horovod) return;
  Reported rep = st.horovod_report;
  if (rep.ranks.empty() && !st.ready_lists.empty()) judge_ready_lists(st, &rep);
  if (!rep.ranks.empty()) r.reported.push_back(rep);
  st.horovod = false;
  st.ready_lists.clear();
  st.ready_ops.clear();
}

}  // namespace denpex::evidence
