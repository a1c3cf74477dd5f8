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
  CHECK(parse_redis_url("http://x", u) ==
        "a URL must start with redis://, rediss://, unix://, redis+sentinel:// or "
        "rediss+sentinel://");
  CHECK(parse_redis_url("redis://h:0", u) == "the port is not a number from 1 to 65535");
  CHECK(parse_redis_url("redis://h:99999", u) == "the port is not a number from 1 to 65535");
  CHECK(parse_redis_url("redis://h/x", u) == "the database is not a number");
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
  CHECK(e == "the database is not a number");
}

TEST_CASE("a password in any position of a mistyped URL is never repeated") {
  RedisUrl u;
  for (const char* text :
       {"redis://h:6379?password=s3cret", "redis://h?password=s3cret", "redis://user:s3cret",
        "redis://h/s3cret", "rediss://h:s3cret/0", "redis+sentinel://h:s3cret/m",
        "redis+sentinel://h/m/s3cret", "unix:///p?password=s3cret", "unix:///p?db=s3cret"}) {
    CAPTURE(text);
    std::string e = parse_redis_url(text, u);
    CHECK_FALSE(e.empty());
    CHECK(e.find("s3cret") == std::string::npos);
  }
}

TEST_CASE("rediss:// is redis:// with TLS") {
  RedisUrl u;
  REQUIRE(parse_redis_url("rediss://:pw@cache.example:6380/2", u).empty());
  CHECK(u.tls);
  CHECK(u.kind == RedisUrl::Kind::tcp);
  CHECK(u.host == "cache.example");
  CHECK(u.port == 6380);
  CHECK(u.db == 2);
  REQUIRE(parse_redis_url("redis://h", u).empty());
  CHECK_FALSE(u.tls);
}

TEST_CASE("sentinel URLs list the sentinels in order, then the master and the db") {
  RedisUrl u;
  REQUIRE(parse_redis_url("redis+sentinel://u:pw@s1:26380,[::1],s3/mymaster/3", u).empty());
  CHECK(u.kind == RedisUrl::Kind::sentinel);
  CHECK_FALSE(u.tls);
  CHECK(u.user == "u");
  CHECK(u.password == "pw");
  REQUIRE(u.sentinels.size() == 3);
  CHECK(u.sentinels[0].host == "s1");
  CHECK(u.sentinels[0].port == 26380);
  CHECK(u.sentinels[1].host == "::1");
  CHECK(u.sentinels[1].port == 26379);
  CHECK(u.sentinels[2].host == "s3");
  CHECK(u.master == "mymaster");
  CHECK(u.db == 3);
  REQUIRE(parse_redis_url("rediss+sentinel://s1/m", u).empty());
  CHECK(u.tls);
  CHECK(u.db == 0);
  CHECK(parse_redis_url("redis+sentinel://s1", u) ==
        "a sentinel URL names the master: redis+sentinel://host/MASTER");
}
