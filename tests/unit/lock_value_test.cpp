#include <doctest/doctest.h>

#include "core/lock_value.h"

using namespace stockctl;

TEST_CASE("lock value: the token first, then who took it; read back as written") {
  const std::string value = lock_value("0a1b", LockHolder{"web 1\n", 42, 1764644645000});
  CHECK(value == "0a1b host=web_1_ pid=42 at=1764644645000");
  std::optional<LockHolder> holder = parse_lock_value(value);
  REQUIRE(holder);
  CHECK(holder->host == "web_1_");
  CHECK(holder->pid == 42);
  CHECK(holder->taken_ms == 1764644645000);
}

TEST_CASE("lock value: a bare token (earlier versions) or a foreign value records no holder") {
  CHECK_FALSE(parse_lock_value("5f3c9a0e1d2b4c6a8e7f9a0b1c2d3e4f"));
  CHECK_FALSE(parse_lock_value(""));
  CHECK_FALSE(parse_lock_value("t host=a pid=x at=1"));
  CHECK_FALSE(parse_lock_value("t host=a pid=1 at=1 more"));
  CHECK_FALSE(parse_lock_value(" host=a pid=1 at=1"));
}

TEST_CASE("describe_lock: key, holder, when and the time left") {
  const std::string value = lock_value("tok", LockHolder{"db7", 4242, 1764644645000});
  CHECK(describe_lock("stock:{A}:lock", value, 27345, 1764644648500) ==
        "lock stock:{A}:lock is held by db7 (pid 4242) since 2025-12-02T03:04:05Z (3 s ago), "
        "27.3 s left");
  CHECK(describe_lock("k", std::string("tok"), 900, 0) ==
        "lock k is held (its value records no holder), 0.9 s left");
  CHECK(describe_lock("k", std::string("tok"), -1, 0).find("no expiry") != std::string::npos);
  CHECK(describe_lock("k", std::nullopt, -2, 0) == "lock k (released just now)");
}
