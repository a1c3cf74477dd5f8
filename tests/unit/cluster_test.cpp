#include <doctest/doctest.h>

#include "redis/cluster/redirect.h"
#include "redis/cluster/slot.h"

using namespace stockctl;

TEST_CASE("key_slot matches Redis Cluster's CRC16 and hash tags") {
  CHECK(crc16("123456789") == 0x31C3);  // the check value in the cluster specification
  CHECK(key_slot("123456789") == 12739);
  CHECK(key_slot("stock:{42}") == key_slot("42"));
  CHECK(key_slot("stock:{42}:lock") == key_slot("stock:{42}"));
  CHECK(key_slot("{redis_key:stock:42}:lock") == key_slot("redis_key:stock:42"));
  CHECK(key_slot("foo{}{bar}") == key_slot("foo{}{bar}"));
}

TEST_CASE("MOVED and ASK redirects are parsed") {
  auto moved = parse_redirect("MOVED 3999 127.0.0.1:6381");
  REQUIRE(moved);
  CHECK_FALSE(moved->ask);
  CHECK(moved->slot == 3999);
  CHECK(moved->address() == "127.0.0.1:6381");
  auto ask = parse_redirect("ASK 12182 10.0.0.2:7002");
  REQUIRE(ask);
  CHECK(ask->ask);
  CHECK(ask->port == 7002);
  auto v6 = parse_redirect("MOVED 1 ::1:7000");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
}

TEST_CASE("other errors and malformed redirects are not redirects") {
  CHECK_FALSE(parse_redirect("ERR unknown command"));
  CHECK_FALSE(parse_redirect("MOVED"));
  CHECK_FALSE(parse_redirect("MOVED x 1.2.3.4:5"));
  CHECK_FALSE(parse_redirect("MOVED 99999 1.2.3.4:5"));
  CHECK_FALSE(parse_redirect("ASK 1 nohost"));
}
