// A diagnosis shaped for a ticket, before any report is written: the two mirror-image findings
// of a two-rank mismatch without a majority become one finding naming both ranks, and every
// evidence line is shown once, in the user's own text (the whole line read again from its file),
// cut around the part that differs rather than at a fixed width. The text, JSON and HTML reports
// all show the result.
#pragma once

#include "diagnose/diagnosis.h"
#include "evidence/input_source.h"

namespace denpex {

// Reads again, from their files, the evidence lines the readers kept cut short (at most 64 KiB
// of a line; standard input and unreadable files keep what was kept), so that the part that
// differs can be found even past the reader's cut; compressed files decode within `decode`, as
// they were read. Never fails.
void restore_evidence_lines(diag::Diagnosis* d, const evidence::DecodeLimits& decode);

// Merges mirror-image pairs (compare/evidence_cut.h merge_mirror_images; their evidence joined,
// the first one's verify kept), cuts each finding's evidence around what tells its found from
// its expected, and gives the blame's initiating party the merged message when it was one of
// the pair's. Never fails.
void shape_for_ticket(diag::Diagnosis* d);

}  // namespace denpex
