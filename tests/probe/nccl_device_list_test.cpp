// NCCL's device-list syntax as NCCL's own parser reads it (its docs' examples: "mlx5_1" also
// selects mlx5_10; "=mlx5_1" only mlx5_1; "^=docker0" everything but docker0; "mlx5_0:1").
#include "probe/nccl_device_list.h"

#include <catch2/catch.hpp>

using namespace denpex;

TEST_CASE("prefixes: mlx5_1 also selects mlx5_10, as NCCL's docs warn") {
  NcclDeviceList l = parse_nccl_device_list("mlx5_1", true);
  CHECK_FALSE(l.exclude);
  CHECK_FALSE(l.exact);
  CHECK(nccl_list_selects(l, "mlx5_1", 1));
  CHECK(nccl_list_selects(l, "mlx5_10", 1));
  CHECK_FALSE(nccl_list_selects(l, "mlx5_0", 1));
}

TEST_CASE("= makes every name exact; ^ excludes; both apply to the whole list, ^ first") {
  NcclDeviceList exact = parse_nccl_device_list("=mlx5_1,mlx5_2", true);
  CHECK(exact.exact);
  CHECK(nccl_list_selects(exact, "mlx5_2", -1));
  CHECK_FALSE(nccl_list_selects(exact, "mlx5_10", -1));
  NcclDeviceList ex = parse_nccl_device_list("^=docker0,lo", false);
  CHECK(ex.exclude);
  CHECK(ex.exact);
  CHECK_FALSE(nccl_list_selects(ex, "docker0", -1));
  CHECK_FALSE(nccl_list_selects(ex, "lo", -1));
  CHECK(nccl_list_selects(ex, "docker01", -1));
  CHECK(nccl_list_selects(ex, "eth0", -1));
  // "=^" is not NCCL's order: '=' is taken, and "^eth" is a name.
  NcclDeviceList wrong = parse_nccl_device_list("=^eth0", false);
  CHECK_FALSE(wrong.exclude);
  CHECK_FALSE(nccl_list_selects(wrong, "eth0", -1));
}

TEST_CASE(":port is read for HCAs only; empty names are dropped; an empty list selects all") {
  NcclDeviceList l = parse_nccl_device_list("mlx5_0:1,,:2,mlx5_1", true);
  REQUIRE(l.entries.size() == 2);
  CHECK(l.entries[0].port == 1);
  CHECK(l.entries[1].port == -1);
  CHECK(nccl_list_selects(l, "mlx5_0", 1));
  CHECK_FALSE(nccl_list_selects(l, "mlx5_0", 2));
  CHECK(nccl_list_selects(l, "mlx5_1", 2));
  // Rail and plane fields (NCCL 2.30.7+) after the port are not the port.
  CHECK(parse_nccl_device_list("mlx5_0:1:0:0", true).entries[0].port == 1);
  // Sockets ignore ports.
  CHECK(parse_nccl_device_list("eth0:1", false).entries[0].port == -1);
  CHECK(nccl_list_selects(parse_nccl_device_list("", false), "anything", -1));
}
