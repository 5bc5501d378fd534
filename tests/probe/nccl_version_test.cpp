#include <catch2/catch.hpp>

#include "probe/nccl_version.h"
#include "probe/record.h"

using namespace denpex;

TEST_CASE("NCCL version literals parse as NCCL writes them") {
  NcclVersion v = parse_nccl_literal("NCCL version 2.28.9+cuda13.0");
  REQUIRE(v.ok);
  CHECK(v.version == "2.28.9");
  CHECK(v.cuda_build == "13.0");
  CHECK(nccl_version_code(v) == 22809);

  NcclVersion c = parse_nccl_literal("NCCL version 2.28.9 compiled with CUDA 13.0");
  REQUIRE(c.ok);
  CHECK(c.cuda_build == "13.0");

  NcclVersion suffix = parse_nccl_literal("NCCL version 2.21.5a+cuda12.4");
  REQUIRE(suffix.ok);
  CHECK(suffix.version == "2.21.5a");
  CHECK(nccl_version_code(suffix) == 22105);

  CHECK_FALSE(parse_nccl_literal("NCCL version %d.%d.%d").ok);
  CHECK_FALSE(parse_nccl_literal("NCCL version mismatch with remote peer %s").ok);
  CHECK_FALSE(parse_nccl_literal("").ok);
}

TEST_CASE("version codes decode in both encodings") {
  CHECK(nccl_version_from_code(22809) == "2.28.9");
  CHECK(nccl_version_from_code(2804) == "2.8.4");   // before 2.9: major*1000 + minor*100 + patch
  CHECK(nccl_version_from_code(21003) == "2.10.3");
  CHECK(nccl_version_from_code(0) == "");
  CHECK(nccl_version_code(parse_nccl_literal("NCCL version 2.8.4+cuda11.2")) == 2804);
  // Found by fuzz_nccl_literal: 233333 * 10000 overflowed int.
  CHECK(nccl_version_code(parse_nccl_literal("NCCL version 233333.1.1")) == 0);
  CHECK(nccl_version_code(parse_nccl_literal("NCCL version 2.100.1")) == 0);
}

TEST_CASE("pick_nccl_literal prefers the literal with a CUDA build") {
  NcclVersion v = pick_nccl_literal(
      {"NCCL version %d.%d.%d", "NCCL version 2.28.9 compiled with CUDA 13.0",
       "NCCL version 2.28.9+cuda13.0"});
  CHECK(v.version == "2.28.9");
  CHECK(v.cuda_build == "13.0");
}
