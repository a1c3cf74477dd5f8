#include "lock/run_lock.h"

#include <doctest/doctest.h>

#include "base/errors.h"
#include "fake_node.h"
#include "redis/standalone_client.h"

using namespace stockctl;
using namespace stockctl::test;

namespace {

constexpr int kNode = 7100;
const std::string kKey = "stockctl:rebuild-lock:stock:";

// One standalone server that keeps locks as Redis would: SET NX PX, and the unlock and extend
// scripts' compare-with-token semantics (FCALL or EVALSHA: key then token, extend adds a ttl).
struct LockServer {
  std::map<std::string, std::string> held;  // lock key -> token
  bool lose_on_extend = false;              // the lock expired and another run took it
  bool set_unanswered = false;              // SET runs, then the connection breaks: no reply

  Reply answer(const Argv& argv) {
    if (argv[0] == "PING") return status("PONG");
    if (argv[0] == "SET") {
      const bool taken = held.count(argv[1]) == 0;
      if (taken) held[argv[1]] = argv[2];
      if (set_unanswered) throw ConnectionError("the node went away before it answered");
      return taken ? status("OK") : nil();
    }
    if (lose_on_extend) held[argv[3]] = "theirs";
    const bool ours = held.count(argv[3]) && held[argv[3]] == argv[4];
    const bool unlock = argv.size() == 5;
    if (unlock && ours) held.erase(argv[3]);
    return integer(ours ? 1 : 0);
  }
};

struct Fixture {
  LockServer server;
  FakeNodes nodes;
  std::unique_ptr<StandaloneClient> client;

  Fixture() {
    nodes.add(kNode, [this](const Argv& argv) { return server.answer(argv); });
    client = std::make_unique<StandaloneClient>(FakeNodes::at(kNode), ClientOptions{60, 0, 0},
                                                nodes.factory());
  }
  std::size_t scripts_sent() { return nodes.count(kNode, "FCALL") + nodes.count(kNode, "EVALSHA"); }
};

}  // namespace

TEST_CASE("a run lock is taken with SET NX PX and released with its token when it ends") {
  Fixture f;
  {
    RunLock lock(*f.client, kKey, 30000);
    CHECK(lock.take());
    const Argv& set = f.nodes.sent(kNode).back();
    CHECK(set.size() == 6);
    CHECK(Argv(set.begin() + 3, set.end()) == Argv{"NX", "PX", "30000"});
    CHECK(f.server.held.count(kKey) == 1);
  }
  CHECK(f.server.held.count(kKey) == 0);
}

TEST_CASE("a run lock another run holds is not taken, and not released when it ends") {
  Fixture f;
  f.server.held[kKey] = "theirs";
  {
    RunLock lock(*f.client, kKey, 30000);
    CHECK_FALSE(lock.take());
  }
  CHECK(f.server.held[kKey] == "theirs");
  CHECK(f.scripts_sent() == 0);
}

TEST_CASE("a run lock whose SET NX got no answer is released by its token when it ends") {
  Fixture f;
  f.server.set_unanswered = true;
  {
    RunLock lock(*f.client, kKey, 30000);
    CHECK_THROWS_AS(lock.take(), ConnectionError);
    CHECK(f.server.held.count(kKey) == 1);  // the SET landed; only its answer was lost
  }
  CHECK(f.server.held.count(kKey) == 0);
}

TEST_CASE("a run lock whose SET NX got no answer leaves another run's lock alone") {
  Fixture f;
  f.server.set_unanswered = true;
  f.server.held[kKey] = "theirs";
  {
    RunLock lock(*f.client, kKey, 30000);
    CHECK_THROWS_AS(lock.take(), ConnectionError);
  }
  CHECK(f.server.held[kKey] == "theirs");
  CHECK(f.scripts_sent() == 1);  // the unlock was sent, and found another token
}

TEST_CASE("a run lock is not extended before a third of its lifetime has passed") {
  Fixture f;
  RunLock lock(*f.client, kKey, 60000);
  REQUIRE(lock.take());
  lock.renew();
  lock.renew();
  CHECK(f.scripts_sent() == 0);
}

TEST_CASE("a run lock whose third has passed is extended, and a lost one stops the run") {
  Fixture f;
  RunLock lock(*f.client, kKey, 1);  // a third of 1 ms is 0: every renew extends
  REQUIRE(lock.take());
  lock.renew();
  CHECK(f.scripts_sent() == 1);
  f.server.lose_on_extend = true;
  CHECK_THROWS_WITH_AS(lock.renew(), ("lost the rebuild lock " + kKey + "; stopped").c_str(),
                       StockctlError);
}
