// The safe pickle reader on pickles made by Python's pickler (protocols 2 to 5), by torch's C++
// pickler (torch-pickler-*.pkl, from fr_gloo_gen.py with torch 2.8.0), by torch's Flight
// Recorder (the fr-gloo-torch-2.8.0 dumps), and on hostile ones made opcode by opcode
// (make_pickle_fixtures.py): refused, nothing executed, no crash.
#include "evidence/pickle.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>

namespace denpex::evidence {
namespace {

using Kind = PickleValue::Kind;

std::string fixture(const std::string& rel) {
  std::ifstream f(std::string(DENPEX_EVIDENCE_FIXTURES) + "/" + rel, std::ios::binary);
  INFO("fixture " << rel);
  REQUIRE(f.good());
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("Python's pickler at protocols 2 to 5: the same plain tree") {
  for (int proto = 2; proto <= 5; ++proto) {
    SECTION("protocol " + std::to_string(proto)) {
      PickleResult r = read_pickle(fixture("pickle/python-protocol-" + std::to_string(proto) + ".pkl"));
      INFO(r.message);
      REQUIRE(r.status == PickleResult::Status::ok);
      const PickleValue& d = r.value;
      REQUIRE(d.is(Kind::dict));
      CHECK(d.find("version")->as_string() == "2.4");
      CHECK(d.find("big")->as_int() == -(int64_t{1} << 40));
      CHECK(d.find("neg")->as_int() == -5);
      if (proto >= 3) {
        CHECK(d.find("bytes")->is(Kind::bytes));
        CHECK(d.find("bytes")->as_string() == std::string("\0\1", 2));
      }
      const auto& entries = d.find("entries")->items();
      REQUIRE(entries.size() == 3);
      const PickleValue& e = entries[2];
      CHECK(e.find("collective_seq_id")->as_int() == 3);
      CHECK(e.find("time_created_ns")->as_int() == 1700000000000000003);
      CHECK(e.find("duration_ms")->as_float() == 1.25);
      CHECK(e.find("time_discovered_completed_ns")->is(Kind::none));
      CHECK(e.find("retired")->is(Kind::boolean));
      CHECK_FALSE(e.find("retired")->as_bool());
      CHECK(e.find("process_group")->is(Kind::tuple));
      CHECK(e.find("process_group")->items()[1].as_string() == "default_pg");
      CHECK(e.find("input_sizes")->items()[0].items()[1].as_int() == 4);
      // The frame dicts are one object shared by every entry (memo): one node, not copies.
      const auto& f0 = entries[0].find("frames")->items()[0];
      const auto& f2 = entries[2].find("frames")->items()[0];
      CHECK(f0.identity() == f2.identity());
      CHECK(f0.find("line")->as_int() == 2924);
    }
  }
}

TEST_CASE("torch's C++ pickler: restore_type_tag and build_*list read as plain values") {
  PickleResult d = read_pickle(fixture("pickle/torch-pickler-dict-of-int-lists.pkl"));
  INFO(d.message);
  REQUIRE(d.status == PickleResult::Status::ok);
  REQUIRE(d.value.is(Kind::dict));
  const PickleValue* in = d.value.find("input_sizes");
  REQUIRE(in);
  REQUIRE(in->items().size() == 2);
  CHECK(in->items()[0].items()[1].as_int() == 2);
  CHECK(in->items()[1].items()[0].as_int() == 8);
  PickleResult dl = read_pickle(fixture("pickle/torch-pickler-double-list.pkl"));
  REQUIRE(dl.status == PickleResult::Status::ok);
  CHECK(dl.value.items()[1].as_float() == 2.5);
  PickleResult bl = read_pickle(fixture("pickle/torch-pickler-bool-list.pkl"));
  REQUIRE(bl.status == PickleResult::Status::ok);
  CHECK(bl.value.items()[0].as_bool());
  PickleResult sl = read_pickle(fixture("pickle/torch-pickler-string-list.pkl"));
  REQUIRE(sl.status == PickleResult::Status::ok);
  CHECK(sl.value.items()[1].as_string() == "BFloat16");
}

TEST_CASE("a real torch 2.8.0 Flight Recorder dump (gloo) reads") {
  PickleResult r = read_pickle(fixture("fr-gloo-torch-2.8.0/agree/nccl_trace_rank_0"));
  INFO(r.message);
  REQUIRE(r.status == PickleResult::Status::ok);
  CHECK(r.value.find("version")->as_string() == "2.9");
  CHECK(r.value.find("entries")->items().size() == 6);
}

TEST_CASE("hostile pickles are refused, with the opcode and offset, and nothing runs") {
  struct Case {
    const char* file;
    PickleResult::Status status;
    const char* says;
  };
  const Case cases[] = {
      {"global-os-system", PickleResult::Status::refused, "GLOBAL at offset 2: os.system is not one of PyTorch's inert builders"},
      {"stack-global-eval", PickleResult::Status::refused, "STACK_GLOBAL at offset 18: builtins.eval is not"},
      {"rebuild-tensor", PickleResult::Status::refused, "torch._utils._rebuild_tensor_v2 is not"},
      {"build-tensorlist", PickleResult::Status::refused, "torch.jit._pickle.build_tensorlist is not"},
      {"newobj", PickleResult::Status::refused, "NEWOBJ at offset 39: outside the subset"},
      {"build-opcode", PickleResult::Status::refused, "BUILD at offset 4"},
      {"persid", PickleResult::Status::refused, "BINPERSID at offset 4"},
      {"deep-nesting", PickleResult::Status::too_large, "containers nested more than 64 deep"},
      {"huge-length", PickleResult::Status::malformed, "BINUNICODE at offset 2: needs 4294967295 bytes, 3 are left"},
      {"huge-binbytes8", PickleResult::Status::malformed, "BINBYTES8 at offset 2: needs 9223372036854775808 bytes"},
      {"cycle", PickleResult::Status::refused, "APPEND at offset 7: puts a list inside itself (a cycle)"},
      {"truncated", PickleResult::Status::malformed, "truncated"},
      {"no-stop", PickleResult::Status::malformed, "without STOP"},
      {"long-binput-huge", PickleResult::Status::too_large, "LONG_BINPUT at offset 4: more than"},
      {"binget-missing", PickleResult::Status::malformed, "BINGET at offset 2: memo entry 7 was never stored"},
      {"long1-wide", PickleResult::Status::too_large, "LONG1 at offset 2: an integer of 9 bytes"},
      {"not-an-opcode", PickleResult::Status::malformed, "opcode 0xff at offset 2: not a pickle opcode"},
      {"protocol-1", PickleResult::Status::refused, "PROTO at offset 0: protocol 1"},
      {"stack-underflow", PickleResult::Status::malformed, "APPEND at offset 2"},
      {"bytes-at-protocol-2", PickleResult::Status::refused, "_codecs.encode is not"},
  };
  const char* marker = "/tmp/denpex-pickle-test-executed";
  ::unlink(marker);
  for (const Case& c : cases) {
    PickleResult r = read_pickle(fixture(std::string("pickle/hostile-") + c.file + ".pkl"));
    INFO(c.file << ": " << r.message);
    CHECK(r.status == c.status);
    CHECK(r.message.find(c.says) != std::string::npos);
    CHECK(r.value.is(Kind::none));
  }
  struct stat st {};
  CHECK(::stat(marker, &st) != 0);  // os.system("touch ...") never ran
}

TEST_CASE("a LONG1 shorter than its length byte says is truncated, never read past the end") {
  // Found by fuzz_pickle: the 8 bytes a LONG1 claimed were read with 1 left.
  const std::string bytes("\x80\x02\x8a\x08\x01", 5);
  PickleResult r = read_pickle(std::string_view(bytes));
  CHECK(r.status == PickleResult::Status::malformed);
  CHECK(r.message == "LONG1 at offset 2: needs 8 bytes, 1 are left: the dump is truncated or not a pickle");
}

TEST_CASE("limits: input size, values, string length") {
  std::string dump = fixture("pickle/python-protocol-2.pkl");
  PickleLimits small;
  small.max_input_bytes = 100;
  CHECK(read_pickle(dump, small).status == PickleResult::Status::too_large);
  PickleLimits few;
  few.max_values = 50;
  PickleResult r = read_pickle(dump, few);
  CHECK(r.status == PickleResult::Status::too_large);
  CHECK(r.message.find("more than 50 values") != std::string::npos);
  PickleLimits short_strings;
  short_strings.max_string_bytes = 8;
  PickleResult s = read_pickle(dump, short_strings);
  CHECK(s.status == PickleResult::Status::too_large);
  CHECK(s.message.find("a string of") != std::string::npos);
  CHECK(read_pickle(std::string("\x80\x02K\x07.", 5)).value.as_int() == 7);
  CHECK(read_pickle("").status == PickleResult::Status::malformed);
}

}  // namespace denpex::evidence
