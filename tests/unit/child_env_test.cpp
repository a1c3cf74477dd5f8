#include "proc/child_env.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace stockctl;

namespace {

bool has(const std::vector<std::string>& env, const std::string& entry) {
  return std::find(env.begin(), env.end(), entry) != env.end();
}

bool names(const std::vector<std::string>& env, const std::string& name) {
  return std::any_of(env.begin(), env.end(),
                     [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; });
}

}  // namespace

TEST_CASE("stockctl's password variables are withheld") {
  auto env = child_environment({"STOCKCTL_PASSWORD=s1", "REDISCLI_AUTH=s2",
                                "STOCKCTL_SENTINEL_PASSWORD=s3", "PATH=/usr/bin"});
  CHECK(env == std::vector<std::string>{"PATH=/usr/bin"});
}

TEST_CASE("every copy of a secret is withheld, not only the first") {
  auto env = child_environment({"REDISCLI_AUTH=a", "HOME=/root", "REDISCLI_AUTH=b"});
  CHECK(env == std::vector<std::string>{"HOME=/root"});
}

TEST_CASE("URL variables are withheld only when they carry a password") {
  auto env = child_environment({"STOCKCTL_URL=redis://u:pw@db:6379/0", "REDIS_URL=redis://db:6380",
                                "PGPASSFILE=/etc/pgpass"});
  CHECK_FALSE(names(env, "STOCKCTL_URL"));
  CHECK(has(env, "REDIS_URL=redis://db:6380"));
  CHECK(has(env, "PGPASSFILE=/etc/pgpass"));
  auto other = child_environment({"REDIS_URL=rediss://:pw@db", "STOCKCTL_URL=unix:///s.sock?db=2"});
  CHECK(other == std::vector<std::string>{"STOCKCTL_URL=unix:///s.sock?db=2"});
}

TEST_CASE("other variables pass unchanged, names only alike included") {
  std::vector<std::string> parent{
      "PATH=/bin", "HOME=/home/op", "STOCKCTL_PASSWORD_FILE=/x", "MY_REDIS_URL=redis://a:b@c",
      "NOEQUALS",  "=weird"};
  CHECK(child_environment(parent) == parent);
}

TEST_CASE("variables set for the child replace inherited ones") {
  auto env = child_environment({"STOCKCTL_SKU=old", "PATH=/bin"}, {{"STOCKCTL_SKU", "42"}});
  CHECK(env == std::vector<std::string>{"PATH=/bin", "STOCKCTL_SKU=42"});
}

TEST_CASE("a URL carries a password in its user info or a query parameter") {
  CHECK(url_carries_password("redis://user:secret@host:6379/0"));
  CHECK(url_carries_password("redis://:secret@host"));
  CHECK(url_carries_password("redis+sentinel://u:p@s1:26379,s2:26379/mymaster"));
  CHECK(url_carries_password("redis://host/0?password=x"));
  CHECK(url_carries_password("unix:///run/r.sock?db=1&auth=x"));
  CHECK(url_carries_password("host?db=0;requirePass=x"));
  CHECK(url_carries_password("user:pw@host"));
  CHECK_FALSE(url_carries_password("redis://user@host:6379"));
  CHECK_FALSE(url_carries_password("redis://host:6379/0"));
  CHECK_FALSE(url_carries_password("redis://[::1]:6379"));
  CHECK_FALSE(url_carries_password("unix:///run/redis.sock?db=3"));
  CHECK_FALSE(url_carries_password("redis://host/0?name=a:b@c"));
}
