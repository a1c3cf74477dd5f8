#include <doctest/doctest.h>

#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "core/hash_slot.h"
#include "core/replication.h"
#include "fake_node.h"
#include "redis/cluster/router.h"
#include "redis/scripts/lock.h"

using namespace stockctl;
using namespace stockctl::test;

namespace {

constexpr int kA = 7000;
constexpr int kB = 7001;

const ClientOptions kNoWait{60, 0, 0};

std::string moved_to(int port, const std::string& key) {
  return fmt::format("MOVED {} 127.0.0.1:{}", key_slot(key), port);
}

std::string ask_at(int port, const std::string& key) {
  return fmt::format("ASK {} 127.0.0.1:{}", key_slot(key), port);
}

}  // namespace

TEST_CASE("MOVED sends the call to the node named and remembers it for the next calls") {
  FakeNodes nodes;
  int owner = kA;  // who serves every slot, as each node tells CLUSTER SLOTS
  auto node = [&](int me) {
    return [&, me](const Argv& argv) {
      if (argv[0] == "CLUSTER") return all_slots_at(owner);
      if (owner != me) return error(moved_to(owner, argv[1]));
      return bulk(fmt::format("value from {}", me));
    };
  };
  nodes.add(kA, node(kA));
  nodes.add(kB, node(kB));
  ClusterClient client(FakeNodes::at(kA), kNoWait, nodes.factory());
  owner = kB;  // the slot moves after discovery

  std::vector<CallResult> first = client.run({Call::read({"GET", "k"})});
  REQUIRE(first[0].state == CallResult::State::replied);
  CHECK(first[0].reply.str == "value from 7001");
  CHECK(nodes.count(kA, "GET") == 1);
  CHECK(nodes.count(kB, "GET") == 1);

  client.run({Call::read({"GET", "k"})});
  CHECK(nodes.count(kA, "GET") == 1);  // not asked again: the map was updated
  CHECK(nodes.count(kB, "GET") == 2);
}

TEST_CASE("ASK sends ASKING and the call to the importing node once, without changing the map") {
  FakeNodes nodes;
  nodes.add(kA, [](const Argv& argv) {
    if (argv[0] == "CLUSTER") return all_slots_at(kA);
    return error(ask_at(kB, argv[1]));
  });
  bool asking = false;
  nodes.add(kB, [&](const Argv& argv) {
    if (argv[0] == "ASKING") {
      asking = true;
      return status("OK");
    }
    // Without ASKING, the importing node sends the client back to the slot's owner.
    Reply r = asking ? bulk("imported") : error(moved_to(kA, argv[1]));
    asking = false;
    return r;
  });
  ClusterClient client(FakeNodes::at(kA), kNoWait, nodes.factory());

  std::vector<CallResult> results = client.run({Call::read({"GET", "k"})});
  CHECK(results[0].reply.str == "imported");
  CHECK(nodes.sent(kB) == std::vector<Argv>{{"ASKING"}, {"GET", "k"}});

  client.run({Call::read({"GET", "k"})});
  CHECK(nodes.count(kA, "GET") == 2);  // the owner is still asked first
}

TEST_CASE("a redirect loop gives up after a bound, naming the key") {
  FakeNodes nodes;
  nodes.add(kA, [](const Argv& argv) {
    if (argv[0] == "CLUSTER") return all_slots_at(kA);
    return error(moved_to(kA, argv[1]));  // always "ask me"
  });
  ClusterClient client(FakeNodes::at(kA), kNoWait, nodes.factory());

  std::vector<CallResult> results = client.run({Call::read({"GET", "k"})});
  CHECK(results[0].reply.is_error());
  CHECK(results[0].reply.str.find("gave up after 16 redirects for key k") != std::string::npos);
  CHECK(nodes.count(kA, "GET") == 17);
}

TEST_CASE("NOSCRIPT loads the script on that node and sends the call again") {
  FakeNodes nodes;
  bool loaded = false;
  nodes.add(kA, [&](const Argv& argv) {
    if (argv[0] == "CLUSTER") return all_slots_at(kA);
    if (argv[0] == "SCRIPT") {
      loaded = true;
      return bulk("sha");
    }
    return loaded ? integer(1) : error("NOSCRIPT No matching script. Please use EVAL.");
  });
  ClusterClient client(FakeNodes::at(kA), kNoWait, nodes.factory());

  std::vector<CallResult> results = client.run({extend_call("{s:a}:lock", "token", 3000)});
  CHECK(parse_extend_answer(results[0].reply));
  CHECK(nodes.count(kA, "SCRIPT") == 1);
  CHECK(nodes.count(kA, "EVALSHA") == 2);
}

TEST_CASE("a server without cluster support is refused at once") {
  FakeNodes nodes;
  nodes.add(kA,
            [](const Argv&) { return error("ERR This instance has cluster support disabled"); });
  CHECK_THROWS_AS(ClusterClient(FakeNodes::at(kA), kNoWait, nodes.factory()), FatalConnectionError);
  CHECK(nodes.count(kA, "CLUSTER") == 1);  // not retried: every node would say the same
}

namespace {

/// CLUSTER SLOTS giving every slot to kA, with `replicas` replicas listed after it.
Reply all_slots_at_a_with(int replicas) {
  std::vector<Reply> range{integer(0), integer(16383), array({bulk("127.0.0.1"), integer(kA)})};
  for (int i = 0; i < replicas; ++i) range.push_back(array({bulk("127.0.0.1"), integer(kB + i)}));
  return array({array(std::move(range))});
}

/// A CLUSTER SLOTS reply that gives every slot to the node at `port`, with one replica.
Reply slots_at_with_replica(int port) {
  return array({array({integer(0), integer(16383), array({bulk("127.0.0.1"), integer(port)}),
                       array({bulk("127.0.0.1"), integer(port + 100)})})});
}

}  // namespace

TEST_CASE("by default a primary the slot map lists with a replica is waited for, else not") {
  for (int replicas : {0, 1}) {
    FakeNodes nodes;
    nodes.add(kA, [&](const Argv& argv) {
      if (argv[0] == "CLUSTER") return all_slots_at_a_with(replicas);
      if (argv[0] == "WAIT") return integer(replicas);
      return status("OK");
    });
    ClusterClient client(FakeNodes::at(kA), ClientOptions{60, kWaitReplicasAuto, 100},
                         nodes.factory());
    std::vector<CallResult> results = client.run(
        {Call::idempotent_write({"SET", "k", "1"}), Call::idempotent_write({"SET", "j", "1"})});
    CHECK(nodes.count(kA, "WAIT") == static_cast<std::size_t>(replicas));  // once, not per call
    CHECK(results[0].state == CallResult::State::replied);
    CHECK(results[1].replicas_wanted == replicas);
  }
}

TEST_CASE("a write with a request id that no replica confirmed is sent again to a new primary") {
  // The first WAIT on A counts no replica; the map read after it gives every slot to B (a
  // failover), whose ledger then answers the row, and whose replica confirms it.
  FakeNodes nodes;
  bool failed_over = false;
  nodes.add(kA, [&](const Argv& argv) {
    if (argv[0] == "CLUSTER")
      return failed_over ? slots_at_with_replica(kB) : all_slots_at_a_with(1);
    if (argv[0] == "WAIT") {
      failed_over = true;
      return integer(0);
    }
    return status("OK");
  });
  nodes.add(kB, [&](const Argv& argv) {
    if (argv[0] == "CLUSTER") return slots_at_with_replica(kB);
    if (argv[0] == "WAIT") return integer(1);
    return status("OK");
  });
  ClusterClient client(FakeNodes::at(kA), ClientOptions{5000, kWaitReplicasAuto, 100},
                       nodes.factory());
  Call row = Call::idempotent_write({"SET", "k", "1"});
  row.resend_unconfirmed = true;  // as a row with a request id
  std::vector<CallResult> results =
      client.run({row, Call::idempotent_write({"SET", "j", "1"}), Call::once({"SET", "l", "1"})});
  // The row on A, then on B; the plain write (its caller has its own way on) and the lock once.
  CHECK(nodes.count(kA, "SET") == 3);
  CHECK(nodes.count(kB, "SET") == 1);
  CHECK(results[0].state == CallResult::State::replied);
  CHECK(results[0].replicas_acked == 1);
  CHECK(results[1].state == CallResult::State::replied);
  CHECK(results[1].replicas_acked == 0);  // left for its caller to call "not confirmed"
}

TEST_CASE("a write with a request id that no replica confirmed is not resent to the same primary") {
  // A replica that lags (or is paused) leaves the primary in place: sending the row again there
  // would only wait for the same replica until --retry-timeout.
  FakeNodes nodes;
  nodes.add(kA, [&](const Argv& argv) {
    if (argv[0] == "CLUSTER") return all_slots_at_a_with(1);
    if (argv[0] == "WAIT") return integer(0);
    return status("OK");
  });
  ClusterClient client(FakeNodes::at(kA), ClientOptions{5000, kWaitReplicasAuto, 100},
                       nodes.factory());
  Call row = Call::idempotent_write({"SET", "k", "1"});
  row.resend_unconfirmed = true;
  std::vector<CallResult> results = client.run({row});
  CHECK(nodes.count(kA, "SET") == 1);
  CHECK(nodes.count(kA, "CLUSTER") >= 2);  // the map was read anew to know
  CHECK(results[0].state == CallResult::State::replied);
  CHECK(results[0].replicas_acked == 0);
  CHECK(results[0].replicas_wanted == 1);  // its caller reports "not confirmed"
}

namespace {

/// A scripted node whose connection breaks when the reply to a WAIT is due, once (`lose` says
/// whether it still will): the primary went away after answering the writes.
class LosesWait : public Connection {
 public:
  LosesWait(std::unique_ptr<Connection> inner, bool& lose)
      : Connection(inner->where()), inner_(std::move(inner)), lose_(lose) {}

  using Connection::append;
  void append(std::initializer_list<std::string_view> head, const Argv& tail) override {
    sent_.emplace_back(head.size() > 0 ? std::string(*head.begin()) : tail.front());
    inner_->append(head, tail);
  }
  Reply read() override {
    lose_if_wait_is_next();
    Reply reply = inner_->read();
    sent_.pop_front();
    return reply;
  }
  std::optional<Reply> read_ready() override {
    lose_if_wait_is_next();
    std::optional<Reply> reply = inner_->read_ready();
    if (reply) sent_.pop_front();
    return reply;
  }
  void flush() override { inner_->flush(); }
  int fd() const override { return -1; }

 private:
  void lose_if_wait_is_next() {
    if (sent_.empty() || sent_.front() != "WAIT" || !lose_) return;
    lose_ = false;
    throw ConnectionError(where() + ": connection lost");
  }

  std::unique_ptr<Connection> inner_;
  bool& lose_;
  std::deque<std::string> sent_;
};

}  // namespace

TEST_CASE("writes whose WAIT was lost with the connection are not confirmed; a row goes again") {
  FakeNodes nodes;
  nodes.add(kA, [&](const Argv& argv) {
    if (argv[0] == "CLUSTER") return all_slots_at_a_with(1);
    if (argv[0] == "WAIT") return integer(1);
    return status("OK");
  });
  bool lose = true;
  ConnectionFactory scripted = nodes.factory();
  ConnectionFactory factory = [&](const ConnectOptions& options) -> std::unique_ptr<Connection> {
    return std::make_unique<LosesWait>(scripted(options), lose);
  };
  ClusterClient client(FakeNodes::at(kA), ClientOptions{5000, kWaitReplicasAuto, 100}, factory);
  Call row = Call::idempotent_write({"SET", "k", "1"});
  row.resend_unconfirmed = true;  // as a row with a request id
  std::vector<CallResult> results = client.run({row, Call::idempotent_write({"SET", "j", "1"})});
  CHECK_FALSE(lose);  // the WAIT was lost
  // The row went again, to the primary the map names (its ledger decides), and was confirmed.
  CHECK(nodes.count(kA, "SET") == 3);
  CHECK(results[0].state == CallResult::State::replied);
  CHECK(results[0].replicas_acked == 1);
  // The plain write is answered, but nothing confirmed it: its caller says so, never "ok".
  CHECK(results[1].state == CallResult::State::replied);
  CHECK(results[1].replicas_wanted == 1);
  CHECK(results[1].replicas_acked < 1);
}
