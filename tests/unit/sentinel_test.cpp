#include "redis/sentinel.h"

#include <doctest/doctest.h>

#include <string>

#include "fake_node.h"

using namespace stockctl;
using namespace stockctl::test;

namespace {

constexpr int kOldMaster = 7100;
constexpr int kNewMaster = 7101;
constexpr int kBehind = 7200;  // a sentinel that has not heard of the failover yet
constexpr int kAhead = 7201;   // one that has

/// A sentinel that names the master at `port` with `epoch`.
Answer sentinel_naming(int port, long long epoch) {
  return [port, epoch](const Argv& argv) {
    if (argv.size() >= 2 && argv[1] == "GET-MASTER-ADDR-BY-NAME") {
      return array({bulk("127.0.0.1"), bulk(std::to_string(port))});
    }
    return array({bulk("name"), bulk("stock"), bulk("config-epoch"), bulk(std::to_string(epoch))});
  };
}

Answer answering_role(const char* role) {
  return [role](const Argv&) {
    if (std::string(role) == "master") return array({bulk("master"), integer(0), array({})});
    return array(
        {bulk("slave"), bulk("127.0.0.1"), integer(kOldMaster), bulk("connect"), integer(-1)});
  };
}

ConnectOptions through_sentinels(std::initializer_list<int> ports) {
  ConnectOptions options;
  options.url.kind = RedisUrl::Kind::sentinel;
  options.url.master = "stock";
  for (int port : ports) options.url.sentinels.push_back(SentinelAddress{"127.0.0.1", port});
  return options;
}

}  // namespace

TEST_CASE("a master named only with a lower config epoch is never tried") {
  // Mid-failover: the sentinel that has heard of it names a replica still being promoted; the
  // one that has not names the old master, which still says it is one.
  FakeNodes nodes;
  nodes.add(kBehind, sentinel_naming(kOldMaster, 1));
  nodes.add(kAhead, sentinel_naming(kNewMaster, 2));
  nodes.add(kOldMaster, answering_role("master"));
  nodes.add(kNewMaster, answering_role("slave"));
  CHECK_THROWS_AS(connect_to_master(through_sentinels({kBehind, kAhead}), nodes.factory()),
                  ConnectionError);
  CHECK(nodes.sent(kOldMaster).empty());  // not even connected to
  CHECK(nodes.count(kNewMaster, "ROLE") == 1);
}

TEST_CASE("the master named with the highest config epoch is the one connected to") {
  FakeNodes nodes;
  nodes.add(kBehind, sentinel_naming(kOldMaster, 1));
  nodes.add(kAhead, sentinel_naming(kNewMaster, 2));
  nodes.add(kOldMaster, answering_role("master"));
  nodes.add(kNewMaster, answering_role("master"));
  std::unique_ptr<Connection> conn =
      connect_to_master(through_sentinels({kBehind, kAhead}), nodes.factory());
  CHECK(conn->where() == fmt::format("127.0.0.1:{}", kNewMaster));
  CHECK(nodes.sent(kOldMaster).empty());
}

TEST_CASE("sentinels agreeing on an epoch are tried in the URL's order") {
  // Equal epochs naming two servers (a sentinel set up by hand to monitor another one): the
  // first that says it is a master is used.
  FakeNodes nodes;
  nodes.add(kBehind, sentinel_naming(kNewMaster, 0));
  nodes.add(kAhead, sentinel_naming(kOldMaster, 0));
  nodes.add(kNewMaster, answering_role("slave"));
  nodes.add(kOldMaster, answering_role("master"));
  std::unique_ptr<Connection> conn =
      connect_to_master(through_sentinels({kBehind, kAhead}), nodes.factory());
  CHECK(conn->where() == fmt::format("127.0.0.1:{}", kOldMaster));
}
