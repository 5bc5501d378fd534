// Evidence a person can read in a ticket: each line shown once, in the user's own text, cut
// around the part that differs (never at a fixed width); and the two mirror-image findings a
// two-rank mismatch gives (each rank blamed with the other's value as "expected") merged into
// one finding that names both ranks. Pure functions over strings and compare/finding.h.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "compare/finding.h"

namespace denpex {

// A byte range [start, end) of a line.
struct Span {
  std::size_t start = 0, end = 0;
  bool empty() const { return start >= end; }
};

// The part of `line` that differs from `other`: from the first byte where they differ to the
// last (counted from the end), widened to whole tokens, so "NCCL version 2.14.3+cuda11.7"
// against "NCCL version 2.19.3+cuda12.3" gives "2.14.3+cuda11.7". An empty span when the lines
// are equal or `line` is a prefix/suffix of `other` in the middle of nothing.
Span difference_span(std::string_view line, std::string_view other);

// Where the values that tell two sides apart appear in `line`: the tokens of `a` that `b` lacks
// and those of `b` that `a` lacks (tokens: runs of letters, digits, '.' and '_'), the first
// occurrence of each not glued to a letter or digit, in line order, at most `max_spans`. For one line holding both sides (a PyTorch
// fingerprint mismatch quotes both ranks) this finds both. Empty when nothing matches.
std::vector<Span> value_spans(std::string_view line, std::string_view a, std::string_view b,
                              std::size_t max_spans = 6);

// `line` shortened to about `width` bytes around the `keep` spans: each span kept whole with
// context on both sides (three quarters of it before the span), cut at word boundaries, "..." where text was left out. With no span the
// line's head is kept (cut at a word boundary). Returned unchanged when it fits in `width`; the
// spans are kept even when together they exceed it. Never fails.
std::string cut_around(std::string_view line, std::vector<Span> keep, std::size_t width);

// `line` cut around the part that differs from `other` (difference_span), as cut_around.
std::string cut_around_difference(std::string_view line, std::string_view other, std::size_t width);

struct EvidenceLine {
  std::string file;
  long long line = 0;
  std::string text;
};

// A finding's evidence as it should be printed: the same file:line (or the same text) once, in
// input order; each line cut around what differs: from the finding's other lines when there are
// several, else around the tokens that tell `found` from `expected` (value_spans). Never fails.
std::vector<EvidenceLine> cut_evidence(const std::vector<EvidenceLine>& lines, std::string_view found,
                                       std::string_view expected, std::size_t width = 160);

// One finding in place of a mirror-image pair, and the indices of the findings it replaces (so
// a caller can merge what it keeps beside each finding, such as evidence).
struct MergedFinding {
  Finding finding;
  std::vector<std::size_t> sources;  // ascending; one index when nothing was merged
};

// Findings of a mismatch without a majority come in mirror images: same code, severity,
// communicator and position, disjoint ranks, each one's `found` the other's `expected`. Each such
// pair becomes one finding naming both sides: ranks and hosts joined, the message "<what the two
// messages share>: rank 0 has <its value>, rank 1 has <its value> (no majority)" with the values
// cut around their difference, `found` "rank 0: <value>; rank 1: <value>", `expected` empty, the
// fix of the first. Other findings pass unchanged; the order is that of each pair's first member.
// Never fails.
std::vector<MergedFinding> merge_mirror_images(const std::vector<Finding>& findings);

// The two values in a merged finding's `found` ("rank 0: <a>; rank 1: <b>"), so that a report
// can mark both in an evidence line. False, leaving *a and *b alone, for any other `found`.
bool merged_sides(std::string_view found, std::string* a, std::string* b);

}  // namespace denpex
