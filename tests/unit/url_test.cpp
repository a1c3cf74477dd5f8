#include "redis/url.h"

#include <doctest/doctest.h>

using namespace stockctl;

TEST_CASE("parses redis:// with user, password, host, port and db") {
  RedisUrl u;
  REQUIRE(parse_redis_url("redis://alice:s%40cret@db.example:6380/3", u).empty());
  CHECK(u.kind == RedisUrl::Kind::tcp);
  CHECK(u.user == "alice");
  CHECK(u.password == "s@cret");
  CHECK(u.host == "db.example");
  CHECK(u.port == 6380);
  CHECK(u.db == 3);
}

TEST_CASE("password without user, and defaults") {
  RedisUrl u;
  REQUIRE(parse_redis_url("redis://:pw@localhost", u).empty());
  CHECK_FALSE(u.user.has_value());
  CHECK(u.password == "pw");
  CHECK(u.port == 6379);
  REQUIRE(parse_redis_url("redis://", u).empty());
  CHECK(u.host == "127.0.0.1");
  CHECK(u.db == 0);
}

TEST_CASE("IPv6 hosts in brackets") {
  RedisUrl u;
  REQUIRE(parse_redis_url("redis://[::1]:7000", u).empty());
  CHECK(u.host == "::1");
  CHECK(u.port == 7000);
  CHECK(describe_endpoint(u) == "[::1]:7000");
}

TEST_CASE("unix sockets with an optional db") {
  RedisUrl u;
  REQUIRE(parse_redis_url("unix:///run/redis.sock?db=2", u).empty());
  CHECK(u.kind == RedisUrl::Kind::unix_socket);
  CHECK(u.path == "/run/redis.sock");
  CHECK(u.db == 2);
  CHECK(describe_endpoint(u) == "unix:/run/redis.sock");
}

TEST_CASE("bad URLs are refused without echoing the password") {
  RedisUrl u;
  CHECK(parse_redis_url("http://x", u) == "a URL must start with redis:// or unix://");
  CHECK(parse_redis_url("rediss://x", u) == "TLS (rediss://) is not supported");
  CHECK(parse_redis_url("redis://h:0", u) == "port '0' is not a number from 1 to 65535");
  CHECK(parse_redis_url("redis://h:99999", u) == "port '99999' is not a number from 1 to 65535");
  CHECK(parse_redis_url("redis://h/x", u) == "database 'x' is not a number");
  CHECK(parse_redis_url("unix://relative", u) == "a unix:// URL needs an absolute path");
  std::string e = parse_redis_url("redis://:hunter2%zz@h", u);
  CHECK(e == "bad percent-escape in the password");
  CHECK(e.find("hunter2") == std::string::npos);
}

TEST_CASE("a password may contain '/', '?' and '@' and never leaks into errors") {
  RedisUrl u;
  REQUIRE(parse_redis_url("redis://:pa/ss?x@y@host:7000/4", u).empty());
  CHECK(u.password == "pa/ss?x@y");
  CHECK(u.host == "host");
  CHECK(u.port == 7000);
  CHECK(u.db == 4);
  std::string e = parse_redis_url("redis://:pa/ss@host/x", u);
  CHECK(e == "database 'x' is not a number");
}
