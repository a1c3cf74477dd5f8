#include <doctest/doctest.h>

#include "core/hash_slot.h"
#include "redis/cluster/redirect.h"
#include "redis/cluster/slot_map.h"

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

TEST_CASE("the slot map names each slot's primary and the slots nobody serves") {
  SlotMap map;
  CHECK(map[0].empty());
  CHECK(map.first_unserved() == 0);
  CHECK(map.addresses().empty());
  for (int s = 0; s < kClusterSlots; ++s) map.set(s, s < 8000 ? "10.0.0.1:7000" : "10.0.0.2:7000");
  CHECK(map.first_unserved() == -1);
  CHECK(map[7999] == "10.0.0.1:7000");
  CHECK(map[8000] == "10.0.0.2:7000");
  map.set(8000, "10.0.0.1:7000");  // a MOVED
  CHECK(map[8000] == "10.0.0.1:7000");
  CHECK(map.addresses() == std::vector<std::string>{"10.0.0.1:7000", "10.0.0.2:7000"});
  for (int s = 8000; s < kClusterSlots; ++s) map.set(s, "10.0.0.1:7000");
  CHECK(map.addresses() == std::vector<std::string>{"10.0.0.1:7000"});  // node 2 serves nothing
}

TEST_CASE("crc16 of every byte value matches the bitwise definition") {
  for (int byte = 0; byte < 256; ++byte) {
    std::uint16_t crc = static_cast<std::uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<std::uint16_t>(crc << 1);
    }
    const char c = static_cast<char>(byte);
    CHECK(crc16(std::string_view(&c, 1)) == crc);
  }
}
