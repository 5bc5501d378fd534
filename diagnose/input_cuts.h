// Inputs that ended early (evidence/log_reader.h: LogReader::cuts: a compressed input damaged,
// or cut at a decoding limit), as the diagnosis tells them: a warning finding and a line of the
// text report naming each, the JSON's inputs.cut, and whether the blame would rest on what was
// cut. What a cut log held before the cut is judged as any log is; the rest is unknown, so a
// rank is not named as the one that started the failure when a failure in the part not read
// could have come before its own.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diagnose/diagnosis.h"

namespace denpex::diag {

// "" when the blame stands on what was read; else, in one sentence, why the initiating party
// cannot be named: a log was cut (or damaged before its first line) before the time of the
// failure blamed, or where no time tells. A cut log that holds the blamed line itself never
// withholds it (what it lost comes after that line). Never fails.
std::string blame_past_cut(const LogReader& r, const BlameResult& b);

// The warning `input-cut` naming every cut input (its message, and the line it was cut at as
// evidence), and what it means for the verdict (`withheld`: blame_past_cut's sentence). Nothing
// when no input was cut.
void cut_findings(const LogReader& r, const std::string& withheld, std::vector<DxFinding>* out);

// inputs.cut: one object per cut input (file, why, compressed_offset, decoded_bytes, line,
// message). An empty array when none (the caller leaves the key out then).
nlohmann::json cuts_json(const LogReader& r);

// "cut: <message>" lines for the text report's input summary; "" when none.
std::string cuts_text(const LogReader& r);

}  // namespace denpex::diag
