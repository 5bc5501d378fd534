// The signal library: every failure signature the room reads, as data. The table is the text
// file evidence/signals.txt, compiled into the binary at build time and parsed and checked once
// at start-up (and by a unit test), so that adding a format is adding one block there.
//
// A block:
//   [id]                     unique, "family.name"
//   family: pytorch          pytorch, nccl, launcher, horovod, cuda, install (for the docs)
//   scope: line              line (any text line), nccl-info, nccl-warn (the body of an NCCL record)
//   reader: failure          the family reader that turns a match into events (families.h)
//   kind: own_error          what the reader makes of it (a failure, fact or report kind)
//   role: initiating         initiating, collateral, report, installation, launcher, calls, context,
//                            fault (of a node or the fabric, met alike by its processes), fabric (a
//                            timeout of the fabric between hosts: the far end stopped answering, so
//                            the process printing it is not blamed even alone), build (a property
//                            of the library build that every process loading it meets: nobody is
//                            blamed, even alone), cause (NCCL's
//                            own text of an error the lines before gave in general terms), hang (a
//                            rank stuck inside a call: initiating, unless the same process timed
//                            out before it, when it hangs in the teardown that followed)
//   code: initiating-failure the finding code it leads to
//   literal: ...             one or more; a line is a candidate when it contains any of them
//   pattern: ...             RE2, with named groups from the field list (fields.h)
//   field: ...               optional further RE2 patterns, each with one named group, each tried alone
//   summary/implicates/tells_apart/fix/verify: text for reports, `explain` and docs/failures.md
//   example: ...             one or more real-format lines; the unit test routes each to this entry
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compare/finding_code.h"
#include "compare/shell_command.h"

namespace denpex::evidence {

// Named fields a pattern may capture.
enum class Field {
  rank, local_rank, group_rank, pid, host, device, op, seq, count, sizes, dtype, version, cuda,
  symbol, library, exit_code, signal, time, ranks, group, what, path, name, value, numel_in,
  numel_out, last_enqueued, last_completed, nranks, comm, comm_id, parent, split, color, world,
  expected, found, peer, kCount
};
// "rank" -> Field::rank; false when the name is not a field.
bool field_from_name(const std::string& name, Field* out);
const char* field_name(Field f);

enum class Scope { line, nccl_info, nccl_warn };

struct Signal {
  std::string id;
  std::string family;
  Scope scope = Scope::line;
  std::string reader;
  std::string kind;
  std::string role;
  std::string code;                     // as written in the table
  FindingCode finding = FindingCode::internal_error;  // `code` as the type, set when it loads
  std::vector<std::string> literals;
  std::string pattern;
  std::vector<std::string> fields;      // optional patterns
  std::string summary, implicates, tells_apart, fix, verify;
  std::vector<std::string> examples;
  int line = 0;                         // where the block starts in the table text
};

struct SignalTable {
  std::vector<Signal> signals;          // in table order: the first matching entry wins
  std::string error;                    // "" when the table is valid
};

// Parses and checks a table text: every block has an id, reader, kind, role, code, a literal,
// a pattern that RE2 compiles with known field names only, fix, verify and an example. Returns
// the entries parsed; on the first problem `error` names the line and what is wrong.
SignalTable parse_signal_table(const std::string& text);

// The table compiled into the binary (parsed on first use; immutable afterwards).
const SignalTable& builtin_signals();
// The table's text as compiled in.
const std::string& builtin_signal_text();

// A verify line of the library as a command (compare/shell_command.h authored_command), the
// recorder's installed path (the token @RECORDER@) quoted like any word; expand_verify is its
// text.
ShellCommand verify_command(const std::string& verify);
std::string expand_verify(const std::string& verify);

}  // namespace denpex::evidence
