// libFuzzer target: the room's readers (evidence/line_repair, evidence/log_reader with the
// signal library and the streamed collective alignment) and the whole diagnosis over what they read, as
// `denpex-probe diagnose` runs them on a pasted log. Every input must give a diagnosis: no crash,
// no unbounded memory, no exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "diagnose/diagnosis.h"
#include "evidence/line_repair.h"
#include "evidence/log_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  {
    // Line repair alone, on the first line.
    std::string line = text.substr(0, text.find('\n'));
    denpex::evidence::LineLabel label;
    (void)denpex::evidence::repair_line(&line, &label);
    (void)label.when.text();
  }
  denpex::evidence::LogReader reader;
  reader.read_text(text, "fuzz.log");
  reader.finish();
  denpex::diag::Diagnosis d = denpex::diag::diagnose(reader);
  (void)denpex::diag::diagnosis_json(d, reader).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  (void)denpex::diag::render_diagnosis(d, reader);
  return 0;
}
