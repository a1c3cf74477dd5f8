#include "lock/init_lock.h"

#include <doctest/doctest.h>

#include "fake_node.h"
#include "redis/cluster/router.h"
#include "redis/scripts/registry.h"

using namespace stockctl;
using namespace stockctl::test;

namespace {

constexpr int kNode = 7000;
const std::string kLock = "{s:a}:lock";

// One node that keeps locks as Redis would: SET NX PX, and the unlock and extend scripts'
// compare-with-token semantics.
struct LockServer {
  std::map<std::string, std::string> held;  // lock key -> token

  Reply answer(const Argv& argv) {
    if (argv[0] == "CLUSTER") return all_slots_at(kNode);
    if (argv[0] == "SET") {
      if (held.count(argv[1])) return nil();
      held[argv[1]] = argv[2];
      return status("OK");
    }
    // EVALSHA sha 1 key token [ttl]
    const bool ours = held.count(argv[3]) && held[argv[3]] == argv[4];
    if (argv[1] == unlock_script().sha1) {
      if (ours) held.erase(argv[3]);
      return integer(ours ? 1 : 0);
    }
    return integer(ours ? 1 : 0);  // extend
  }
};

struct Fixture {
  LockServer server;
  FakeNodes nodes;
  std::unique_ptr<ClusterClient> client;

  Fixture() {
    nodes.add(kNode, [this](const Argv& argv) { return server.answer(argv); });
    client = std::make_unique<ClusterClient>(FakeNodes::at(kNode), ClientOptions{60, 0, 0},
                                             nodes.factory());
  }
};

const LockTiming kShortWait{10000, 30};

}  // namespace

TEST_CASE("a free lock is taken with our token and released only with it") {
  Fixture f;
  auto never = [] { return false; };
  CHECK(acquire_lock(*f.client, kLock, "mine", kShortWait, never) == LockWait::acquired);
  CHECK(f.server.held[kLock] == "mine");
  CHECK(f.nodes.sent(kNode).at(1) ==
        Argv{"SET", kLock, "mine", "NX", "PX", std::to_string(kShortWait.ttl_ms)});

  release_lock(*f.client, kLock, "theirs");
  CHECK(f.server.held.count(kLock) == 1);
  release_lock(*f.client, kLock, "mine");
  CHECK(f.server.held.count(kLock) == 0);
}

TEST_CASE("a held lock is waited for until the holder's work is seen done") {
  Fixture f;
  f.server.held[kLock] = "theirs";
  int asked = 0;
  auto done_on_second_look = [&] { return ++asked == 2; };
  CHECK(acquire_lock(*f.client, kLock, "mine", LockTiming{10000, 60000}, done_on_second_look) ==
        LockWait::resolved);
  CHECK(f.nodes.count(kNode, "SET") == 2);
  CHECK(f.server.held[kLock] == "theirs");
}

TEST_CASE("a lock held past the wait ends the wait as timed out") {
  Fixture f;
  f.server.held[kLock] = "theirs";
  CHECK(acquire_lock(*f.client, kLock, "mine", kShortWait, [] { return false; }) ==
        LockWait::timed_out);
  CHECK(f.server.held[kLock] == "theirs");
}

TEST_CASE("a lock is extended only while it holds our token") {
  Fixture f;
  f.server.held[kLock] = "mine";
  CHECK(extend_lock(*f.client, kLock, "mine", 5000));
  f.server.held[kLock] = "theirs";  // expired and taken by another process
  CHECK_FALSE(extend_lock(*f.client, kLock, "mine", 5000));
}
