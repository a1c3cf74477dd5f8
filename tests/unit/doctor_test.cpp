#include "core/doctor.h"

#include <doctest/doctest.h>

using namespace stockctl;

namespace {

NodeFacts facts(std::map<std::string, std::string> info,
                std::map<std::string, std::string> config = {}) {
  NodeFacts f;
  f.node = "10.0.0.1:6379";
  f.info = std::move(info);
  f.config = std::move(config);
  return f;
}

const KeyScheme kTagged{"stock:", true};
const KeyScheme kClassic{"redis_key:stock:", false};

}  // namespace

TEST_CASE("INFO text is read field by field") {
  auto info = parse_info(
      "# Server\r\nredis_version:7.0.15\r\n\r\n# Keyspace\r\ndb0:keys=3,expires=1,avg_ttl=0\r\n");
  CHECK(info.at("redis_version") == "7.0.15");
  CHECK(info.at("db0") == "keys=3,expires=1,avg_ttl=0");
  CHECK(info.size() == 2);
}

TEST_CASE("eviction: allkeys with a maxmemory fails, volatile warns while keys expire") {
  auto lru = facts({{"evicted_keys", "12"}},
                   {{"maxmemory-policy", "allkeys-lru"}, {"maxmemory", "3145728"}});
  Finding f = check_eviction(lru);
  CHECK(f.status == CheckStatus::fail);
  CHECK(f.detail.find("12 keys evicted") != std::string::npos);
  CHECK(f.hint.find("noeviction") != std::string::npos);
  CHECK(
      check_eviction(facts({}, {{"maxmemory-policy", "allkeys-lfu"}, {"maxmemory", "0"}})).status ==
      CheckStatus::warn);
  auto volatile_policy = std::map<std::string, std::string>{{"maxmemory-policy", "volatile-ttl"},
                                                            {"maxmemory", "100"}};
  CHECK(check_eviction(facts({{"db0", "keys=5,expires=2,avg_ttl=9"}}, volatile_policy)).status ==
        CheckStatus::warn);
  CHECK(check_eviction(facts({{"db0", "keys=5,expires=0,avg_ttl=0"}}, volatile_policy)).status ==
        CheckStatus::ok);
  Finding ok = check_eviction(facts({}, {{"maxmemory-policy", "noeviction"}}));
  CHECK(ok.status == CheckStatus::ok);
  CHECK(ok.hint.empty());
}

TEST_CASE("persistence: neither AOF nor RDB warns") {
  CHECK(check_persistence(facts({}, {{"appendonly", "no"}, {"save", ""}})).status ==
        CheckStatus::warn);
  CHECK(check_persistence(facts({}, {{"appendonly", "yes"}, {"save", ""}})).status ==
        CheckStatus::ok);
  CHECK(check_persistence(facts({}, {{"appendonly", "no"}, {"save", "3600 1"}})).status ==
        CheckStatus::ok);
}

TEST_CASE("replication: no replica or a replica not online warns") {
  CHECK(check_replication(facts({{"role", "master"}, {"connected_slaves", "0"}})).status ==
        CheckStatus::warn);
  CHECK(check_replication(facts({{"role", "master"},
                                 {"connected_slaves", "1"},
                                 {"slave0", "ip=10.0.0.2,port=6379,state=online,offset=1,lag=0"}},
                                {{"min-replicas-to-write", "1"}, {"min-replicas-max-lag", "10"}}))
            .status == CheckStatus::ok);
  CHECK(check_replication(facts({{"role", "master"},
                                 {"connected_slaves", "1"},
                                 {"slave0", "ip=10.0.0.2,port=6379,state=wait_bgsave"}}))
            .status == CheckStatus::warn);
  CHECK(check_replication(facts({{"role", "slave"}, {"master_link_status", "down"}})).status ==
        CheckStatus::warn);
}

TEST_CASE("cluster: a slot left migrating fails with the fix hint") {
  NodeFacts f = facts({});
  f.cluster_info = "cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_known_nodes:3\r\n";
  f.cluster_nodes =
      "aaaa1111bbbb 10.0.0.1:6379@16379 myself,master - 0 0 1 connected 0-5460 "
      "[42->-cccc3333dddd] [7000-<-eeee5555ffff]\n"
      "cccc3333dddd 10.0.0.2:6379@16379 master - 0 0 2 connected 5461-10922\n";
  Finding bad = check_cluster(f);
  CHECK(bad.status == CheckStatus::fail);
  CHECK(bad.detail == "slot 42 migrating to cccc3333; slot 7000 importing from eeee5555");
  CHECK(bad.hint ==
        "run redis-cli --cluster fix 10.0.0.1:6379 (then redis-cli --cluster check "
        "10.0.0.1:6379)");
  f.cluster_nodes = "aaaa1111bbbb 10.0.0.1:6379@16379 myself,master - 0 0 1 connected 0-5460\n";
  CHECK(check_cluster(f).status == CheckStatus::ok);
  f.cluster_info = "cluster_state:fail\r\ncluster_slots_assigned:16000\r\n";
  CHECK(check_cluster(f).detail == "cluster_state fail; 384 slots not covered");
  CHECK(check_cluster(facts({})).detail == "not a cluster");
}

TEST_CASE("version: below 6.2 warns") {
  CHECK(check_version(facts({{"redis_version", "6.0.16"}})).status == CheckStatus::warn);
  CHECK(check_version(facts({{"redis_version", "5.0.7"}})).status == CheckStatus::warn);
  CHECK(check_version(facts({{"redis_version", "6.2.0"}})).status == CheckStatus::ok);
  CHECK(check_version(facts({{"redis_version", "7.0.15"}})).status == CheckStatus::ok);
  CHECK(check_version(facts({})).status == CheckStatus::warn);
}

TEST_CASE("locks: init and run locks are told from other keys; no expiry fails") {
  CHECK(is_stockctl_lock(kTagged, "stock:{42}:lock"));
  CHECK(is_stockctl_lock(kTagged, "stockctl:rebuild-lock:stock:"));
  CHECK_FALSE(is_stockctl_lock(kTagged, "other:{42}:lock"));
  CHECK_FALSE(is_stockctl_lock(kTagged, "stock:{42}:lockout"));
  CHECK(is_stockctl_lock(kClassic, "{redis_key:stock:42}:lock"));
  std::vector<LockKey> held{{"stock:{1}:lock", 5000, {}}, {"stock:{2}:lock", -1, {}}};
  Finding f = check_locks("10.0.0.1:6379", held);
  CHECK(f.status == CheckStatus::fail);
  CHECK(f.detail.find("stock:{2}:lock") != std::string::npos);
  CHECK(f.hint.find("redis-cli -h 10.0.0.1 -p 6379 DEL 'stock:{2}:lock'") != std::string::npos);
  CHECK(check_locks("n", {{"stock:{1}:lock", 5000, {}}}).status == CheckStatus::ok);
}

TEST_CASE("clock: a node more than a second off the others warns") {
  std::vector<ClockSample> samples{{"a:1", 1'000'000, 1'000'000, 2, {}},
                                   {"b:1", 1'000'400, 1'000'000, 2, {}},
                                   {"c:1", 1'002'500, 1'000'000, 3, {}}};
  auto out = check_clocks(samples);
  REQUIRE(out.size() == 3);
  CHECK(out[0].status == CheckStatus::ok);
  CHECK(out[1].status == CheckStatus::ok);
  CHECK(out[2].status == CheckStatus::warn);
  CHECK(out[2].detail == "clock 2100 ms ahead of the other nodes'");
  // A slow round trip explains an apparent difference of the same size.
  std::vector<ClockSample> slow{{"a:1", 1'000'000, 1'000'000, 900, {}},
                                {"b:1", 1'001'500, 1'000'000, 900, {}}};
  CHECK(check_clocks(slow)[1].status == CheckStatus::ok);
  CHECK(check_clocks({{"a:1", 5, 1'000'000, 1, {}}})[0].status == CheckStatus::ok);
}

TEST_CASE("values: stock keys are told from companions; corrupt values fail") {
  CHECK(sku_of_stock_key(kTagged, "stock:{42}") == std::optional<std::string>("42"));
  CHECK_FALSE(sku_of_stock_key(kTagged, "stock:{42}:lock"));
  CHECK_FALSE(sku_of_stock_key(kTagged, "stock:42"));
  // An id another program stored in bytes that are not UTF-8 is an item doctor reads too.
  CHECK(sku_of_stock_key(kTagged, "stock:{\xff\xfe}") == std::optional<std::string>("\xff\xfe"));
  CHECK(sku_of_stock_key(kClassic, "redis_key:stock:42") == std::optional<std::string>("42"));
  CHECK_FALSE(check_value("n", "stock:{1}", std::string("10"), false));
  CHECK_FALSE(check_value("n", "stock:{1}", std::string("-1"), false));
  CHECK_FALSE(check_value("n", "stock:{1}", std::nullopt, false));
  CHECK(check_value("n", "stock:{1}", std::string("abc"), false)->detail ==
        "stock:{1} holds 'abc', not a stock value");
  CHECK(check_value("n", "stock:{1}", std::string("-5"), false));
  CHECK(check_value("n", "stock:{1}", std::nullopt, true)->status == CheckStatus::fail);
}

TEST_CASE("exit status: a failure, or with --strict a warning, is 1") {
  std::vector<Finding> warned{{"persistence", "n", CheckStatus::warn, "", "x"}};
  CHECK(doctor_exit_status(warned, false) == 0);
  CHECK(doctor_exit_status(warned, true) == 1);
  warned.push_back({"locks", "n", CheckStatus::fail, "", "x"});
  CHECK(doctor_exit_status(warned, false) == 1);
}

TEST_CASE("failure message: one line naming what failed, empty when doctor exits 0") {
  std::vector<Finding> findings{{"persistence", "a:1", CheckStatus::warn, "no AOF", "x"}};
  CHECK(doctor_failure_message(findings, false).empty());
  CHECK(doctor_failure_message(findings, true) ==
        "doctor: check persistence failed or warned (--strict) on a:1: no AOF");
  findings.push_back({"connect", "b:2", CheckStatus::fail, "connection refused", "h"});
  CHECK(doctor_failure_message(findings, false) ==
        "doctor: check connect failed on b:2: connection refused");
  for (int i = 0; i < 6; ++i) findings.push_back({"locks", "c:3", CheckStatus::fail, "", ""});
  CHECK(doctor_failure_message(findings, false) ==
        "doctor: 2 checks failed: connect on b:2, locks on c:3");
  for (int i = 0; i < 6; ++i) {
    findings.push_back({"values", "n" + std::to_string(i), CheckStatus::fail, "", ""});
  }
  CHECK(doctor_failure_message(findings, false) ==
        "doctor: 8 checks failed: connect on b:2, locks on c:3, values on n0, values on n1, "
        "values on n2 and 3 more");
}

TEST_CASE(
    "failure message: a check that failed for several values of a node is one, told by "
    "its summary") {
  std::vector<Finding> findings{
      {"values", "a:1", CheckStatus::fail, "stock:{x} holds 'q'", "h"},
      {"values", "a:1", CheckStatus::fail, "stock:{y} holds 'r'", "h"},
      {"values", "a:1", CheckStatus::fail, "9 items read, 2 corrupt", ""}};
  CHECK(doctor_failure_message(findings, false) ==
        "doctor: check values failed on a:1: 9 items read, 2 corrupt");
}

TEST_CASE("metrics: one gauge per check, node and status; the worst status is 1") {
  std::vector<Finding> findings{{"values", "a:1", CheckStatus::fail, "stock:{x}", "h"},
                                {"values", "a:1", CheckStatus::ok, "summary", ""}};
  std::string text = render_doctor_metrics(findings);
  CHECK(text.find("# TYPE stockctl_doctor_check gauge\n") != std::string::npos);
  CHECK(text.find("stockctl_doctor_check{check=\"values\",node=\"a:1\",status=\"fail\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("stockctl_doctor_check{check=\"values\",node=\"a:1\",status=\"ok\"} 0\n") !=
        std::string::npos);
  CHECK(text.find("status=\"warn\"} 0\n") != std::string::npos);
}

TEST_CASE("holds: cluster records past due warn and say to run reap from cron") {
  CHECK(check_cluster_holds("n:1", 0, 0).status == CheckStatus::ok);
  CHECK(check_cluster_holds("n:1", 2, 0).detail ==
        "2 items have expired holds whose units were not given back yet");
  Finding warn = check_cluster_holds("n:1", 1, 4);
  CHECK(warn.status == CheckStatus::warn);
  CHECK(warn.detail ==
        "4 cluster holds or orders are past due and not reaped yet (expired, cut off before their "
        "decision, or decided and not finished): their units stay held until reap; 1 item has "
        "expired holds whose units were not given back yet");
  CHECK(warn.hint ==
        "run stockctl reap --cluster from cron every minute (on a cluster only reap gives "
        "expired holds back)");
}

TEST_CASE("holds: expired holds not yet given back warn and say to run reap") {
  Finding ok = check_holds("n:1", 0);
  CHECK(ok.status == CheckStatus::ok);
  Finding warn = check_holds("n:1", 3);
  CHECK(warn.status == CheckStatus::warn);
  CHECK(warn.detail == "3 items have expired holds whose units were not given back yet");
  CHECK(warn.hint == "run stockctl reap (a cron line or systemd timer every minute)");
  CHECK(check_holds("n:1", 1).detail ==
        "1 item has expired holds whose units were not given back yet");
}

TEST_CASE("replication: replicas with min-replicas-to-write 0 warn, naming what bounds the loss") {
  auto online = std::map<std::string, std::string>{
      {"role", "master"},
      {"connected_slaves", "1"},
      {"slave0", "ip=10.0.0.2,port=6379,state=online,offset=1,lag=0"}};
  Finding unbounded = check_replication(facts(online, {{"min-replicas-to-write", "0"}}));
  CHECK(unbounded.status == CheckStatus::warn);
  CHECK(unbounded.detail.find("min-replicas-to-write 0") != std::string::npos);
  CHECK(unbounded.hint.find("min-replicas-to-write 1") != std::string::npos);
  CHECK(unbounded.hint.find("min-replicas-max-lag") != std::string::npos);
  CHECK(unbounded.hint.find("--wait-replicas 1") != std::string::npos);
  CHECK(check_replication(facts(online)).status == CheckStatus::warn);  // not set: 0
  Finding bounded = check_replication(
      facts(online, {{"min-replicas-to-write", "1"}, {"min-replicas-max-lag", "10"}}));
  CHECK(bounded.status == CheckStatus::ok);
  CHECK(bounded.detail == "1 replicas online; min-replicas-to-write 1, min-replicas-max-lag 10");
}

TEST_CASE("memory: full fails, above 90% warns, no maxmemory is ok and says so") {
  CHECK(check_memory(facts({{"used_memory", "1000"}}, {{"maxmemory", "0"}})).detail ==
        "used_memory 1000; no maxmemory: the host's memory is the limit");
  Finding full = check_memory(facts({{"used_memory", "2000"}}, {{"maxmemory", "1000"}}));
  CHECK(full.status == CheckStatus::fail);
  CHECK(full.detail.find("refuses writes with OOM now") != std::string::npos);
  CHECK(full.hint.find("raise maxmemory") != std::string::npos);
  CHECK(check_memory(facts({{"used_memory", "950"}}, {{"maxmemory", "1000"}})).status ==
        CheckStatus::warn);
  CHECK(check_memory(facts({{"used_memory", "900"}}, {{"maxmemory", "1000"}})).status ==
        CheckStatus::ok);
  // Replication and AOF buffers are not counted against maxmemory by Redis either.
  CHECK(check_memory(facts({{"used_memory", "1200"}, {"mem_not_counted_for_evict", "400"}},
                           {{"maxmemory", "1000"}}))
            .status == CheckStatus::ok);
}

TEST_CASE("replication: replicas from INFO; one without persistence warns") {
  auto primary = facts({{"role", "master"},
                        {"connected_slaves", "2"},
                        {"slave0", "ip=10.0.0.2,port=6380,state=online,offset=1,lag=0"},
                        {"slave1", "ip=10.0.0.3,port=6381,state=online,offset=1,lag=1"}});
  CHECK(replica_addresses(primary) == std::vector<std::string>{"10.0.0.2:6380", "10.0.0.3:6381"});
  ReplicaFacts bare{"10.0.0.2:6380", std::nullopt, {{"appendonly", "no"}, {"save", ""}}, {}};
  Finding f = check_replica_persistence("10.0.0.1:6379", bare);
  CHECK(f.status == CheckStatus::warn);
  CHECK(f.check == "replication");
  CHECK(f.node == "10.0.0.2:6380");
  CHECK(f.detail.find("replica of 10.0.0.1:6379") != std::string::npos);
  CHECK(f.hint.find("appendonly yes on the replica") != std::string::npos);
  ReplicaFacts aof{"10.0.0.2:6380", std::nullopt, {{"appendonly", "yes"}, {"save", ""}}, {}};
  CHECK(check_replica_persistence("10.0.0.1:6379", aof).status == CheckStatus::ok);
  ReplicaFacts away{"10.0.0.2:6380", std::string("connection refused"), {}, {}};
  Finding unasked = check_replica_persistence("10.0.0.1:6379", away);
  CHECK(unasked.status == CheckStatus::warn);
  CHECK(unasked.detail ==
        "replica of 10.0.0.1:6379: not reachable from here (connection refused), its "
        "persistence not checked");
  CHECK(unasked.hint.find("redis-cli -h 10.0.0.2 -p 6380 PING") != std::string::npos);
  // doctor pointed at the replica itself (or at a cluster's replica) says the same.
  auto replica = facts({{"role", "slave"},
                        {"master_host", "10.0.0.1"},
                        {"master_port", "6379"},
                        {"master_link_status", "up"}},
                       {{"appendonly", "no"}, {"save", ""}});
  CHECK(check_replication(replica).status == CheckStatus::warn);
  replica.config["appendonly"] = "yes";
  CHECK(check_replication(replica).status == CheckStatus::ok);
}

TEST_CASE("sentinel: unreachable warns; disagreeing, not monitoring or no quorum fails") {
  const std::string ok = "OK 3 usable Sentinels. Quorum and failover authorization can be reached";
  std::vector<SentinelView> views{
      {"10.0.0.9:26379", std::nullopt, "10.0.0.1:6379", ok, true},
      {"10.0.0.8:26379", std::string("connection refused"), "", "", false},
      {"10.0.0.7:26379", std::nullopt, "10.0.0.2:6379", ok, true},
      {"10.0.0.6:26379", std::nullopt, "10.0.0.1:6379", ok, true},
      {"10.0.0.5:26379", std::nullopt, "", "", false},
      {"10.0.0.4:26379", std::nullopt, "10.0.0.1:6379", "NOQUORUM 1 usable Sentinels", false}};
  auto found = check_sentinels("stock", views);
  REQUIRE(found.size() == 6);
  CHECK(found[0].status == CheckStatus::ok);
  CHECK(found[0].detail == "master 10.0.0.1:6379; " + ok);
  CHECK(found[1].status == CheckStatus::warn);
  CHECK(found[2].status == CheckStatus::fail);
  CHECK(found[2].detail.find("where sentinel 10.0.0.9:26379 names 10.0.0.1:6379") !=
        std::string::npos);
  CHECK(found[2].hint.find("SENTINEL RESET stock") != std::string::npos);
  CHECK(found[3].status == CheckStatus::ok);
  CHECK(found[4].status == CheckStatus::fail);
  CHECK(found[4].detail == "does not monitor a master named 'stock'");
  CHECK(found[5].status == CheckStatus::fail);
  CHECK(found[5].detail.find("NOQUORUM") != std::string::npos);
  for (const Finding& f : found) CHECK(f.check == "sentinel");
  CHECK(found[1].hint.find("start the sentinel") != std::string::npos);
}

TEST_CASE("sentinel: of one config epoch, the master stockctl reached is the agreed one") {
  const std::string ok = "OK 2 usable Sentinels. Quorum and failover authorization can be reached";
  std::vector<SentinelView> views{{"s2:26379", std::nullopt, "10.0.0.3:6379", ok, true, 0},
                                  {"s1:26379", std::nullopt, "10.0.0.1:6379", ok, true, 0}};
  auto by_rule = check_sentinels("stock", views);
  CHECK(by_rule[0].status == CheckStatus::ok);  // the first named, when nothing was reached
  auto reached = check_sentinels("stock", views, std::string("10.0.0.1:6379"));
  CHECK(reached[0].status == CheckStatus::fail);
  CHECK(reached[0].detail.find("where sentinel s1:26379 names 10.0.0.1:6379") != std::string::npos);
  CHECK(reached[1].status == CheckStatus::ok);
}

TEST_CASE("sentinel: one that refuses our credentials is told apart from one that is down") {
  std::vector<SentinelView> views{
      {"10.0.0.9:26379", std::string("authentication failed at 10.0.0.9:26379: WRONGPASS"), "", "",
       false}};
  auto found = check_sentinels("stock", views);
  REQUIRE(found.size() == 1);
  CHECK(found[0].status == CheckStatus::warn);
  CHECK(found[0].detail.find("refused our credentials") == 0);
  CHECK(found[0].hint.find("STOCKCTL_SENTINEL_PASSWORD") != std::string::npos);
}

TEST_CASE("sentinel: the master named with the highest config epoch is the agreed one") {
  // Two sentinels have not heard of the failover yet: outvoted or not, the master they name is
  // the replaced one, and the client connects to the one named with the higher epoch.
  const std::string ok = "OK 3 usable Sentinels. Quorum and failover authorization can be reached";
  std::vector<SentinelView> views{{"10.0.0.9:26379", std::nullopt, "10.0.0.1:6379", ok, true, 4},
                                  {"10.0.0.8:26379", std::nullopt, "10.0.0.1:6379", ok, true, 4},
                                  {"10.0.0.7:26379", std::nullopt, "10.0.0.2:6379", ok, true, 5}};
  auto found = check_sentinels("stock", views);
  REQUIRE(found.size() == 3);
  CHECK(found[0].status == CheckStatus::fail);
  CHECK(found[0].detail ==
        "names 10.0.0.1:6379 as the master of 'stock' (config epoch 4) where sentinel "
        "10.0.0.7:26379 names 10.0.0.2:6379 (config epoch 5), the master stockctl writes to: a "
        "client asking this sentinel writes to a server the others do not follow");
  CHECK(found[1].status == CheckStatus::fail);
  CHECK(found[2].status == CheckStatus::ok);
}

TEST_CASE("split: a warning when a primary holds more than its share of an item's buckets") {
  const std::vector<SlotRange> ranges{
      {0, 5460, "a:1"}, {5461, 10922, "b:1"}, {10923, 16383, "c:1"}};
  SplitRecord record;
  record.state = SplitState::live;
  record.target = {"9cbf512f", {100, 6000, 12000, 200}};  // a: 2, b: 1, c: 1 (share 2)
  CHECK_FALSE(check_split_spread("stock:{A}", "A", record, ranges));

  // A resharding moved bucket 1's slot to a: a now has 3 of 4.
  record.target.slots[1] = 300;
  const std::optional<Finding> f = check_split_spread("stock:{A}", "A", record, ranges);
  REQUIRE(f);
  CHECK(f->check == "split");
  CHECK(f->node == "a:1");
  CHECK(f->status == CheckStatus::warn);
  CHECK(f->detail.find("3 of the 4 buckets of stock:{A}") != std::string::npos);
  CHECK(f->hint.find("stockctl split A --buckets 4") != std::string::npos);

  // One Redis (no slot ranges), and a layout not live: nothing to judge.
  CHECK_FALSE(check_split_spread("stock:{A}", "A", record, {}));
  record.state = SplitState::drain;
  CHECK_FALSE(check_split_spread("stock:{A}", "A", record, ranges));
}

namespace {

const std::string kNoConfig = "NOPERM this user has no permissions to run the 'config|get' command";

// A node whose every CONFIG GET was refused, as for an ACL user without +config|get.
NodeFacts config_refused(std::map<std::string, std::string> info) {
  NodeFacts f = facts(std::move(info));
  for (const char* name : {"maxmemory-policy", "maxmemory", "appendonly", "appendfsync", "save",
                           "min-replicas-to-write", "min-replicas-max-lag"}) {
    f.config_unread[name] = std::string("CONFIG GET ") + name + ": " + kNoConfig;
  }
  return f;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("CONFIG GET refused: the checks that need it warn, saying why, never ok") {
  const NodeFacts f = config_refused({{"role", "master"},
                                      {"connected_slaves", "1"},
                                      {"slave0", "ip=10.0.0.2,port=6379,state=online,lag=0"},
                                      {"used_memory", "1000"}});
  Finding eviction = check_eviction(f);
  CHECK(eviction.status == CheckStatus::warn);
  CHECK(eviction.detail == "maxmemory-policy could not be read (CONFIG GET maxmemory-policy: " +
                               kNoConfig + "): eviction not checked");
  CHECK(contains(eviction.hint, "check by hand"));
  CHECK(contains(eviction.hint, "noeviction, or volatile-* only while no key has an expiry"));
  Finding persistence = check_persistence(f);
  CHECK(persistence.status == CheckStatus::warn);
  CHECK(contains(persistence.detail,
                 "AOF and RDB settings could not be read (CONFIG GET "
                 "appendonly: NOPERM"));
  CHECK(!contains(persistence.detail, "neither"));
  Finding replication = check_replication(f);
  CHECK(replication.status == CheckStatus::warn);
  CHECK(contains(replication.detail, "min-replicas-to-write could not be read"));
  CHECK(!contains(replication.detail, "min-replicas-to-write 0"));
  Finding memory = check_memory(f);
  CHECK(memory.status == CheckStatus::warn);
  CHECK(contains(memory.detail, "maxmemory could not be read (CONFIG GET maxmemory: NOPERM"));
  CHECK(!contains(memory.detail, "no maxmemory"));
}

TEST_CASE("CONFIG GET refused: what was read still decides") {
  NodeFacts f = config_refused({{"evicted_keys", "3"}});
  f.config["maxmemory-policy"] = "noeviction";
  f.config_unread.erase("maxmemory-policy");
  CHECK(check_eviction(f).status == CheckStatus::ok);  // noeviction needs no maxmemory
  f.config["maxmemory-policy"] = "allkeys-lru";
  Finding allkeys = check_eviction(f);
  CHECK(allkeys.status == CheckStatus::warn);
  CHECK(contains(allkeys.detail, "maxmemory could not be read"));
  f.config["appendonly"] = "yes";
  f.config_unread.erase("appendonly");
  Finding aof = check_persistence(f);  // AOF alone keeps the data, whatever save says
  CHECK(aof.status == CheckStatus::ok);
  CHECK(aof.detail == "AOF (appendfsync unknown)");
  // A replica whose settings were refused: its link is reported; persistence is not claimed.
  NodeFacts replica = config_refused({{"role", "slave"},
                                      {"master_host", "10.0.0.1"},
                                      {"master_port", "6379"},
                                      {"master_link_status", "up"}});
  CHECK(check_replication(replica).status == CheckStatus::ok);
  ReplicaFacts asked{"10.0.0.2:6380",
                     std::nullopt,
                     {},
                     {{"appendonly",
                       "CONFIG GET appendonly: "
                       "ERR unknown command"}}};
  Finding unread = check_replica_persistence("10.0.0.1:6379", asked);
  CHECK(unread.status == CheckStatus::warn);
  CHECK(contains(unread.detail, "its AOF and RDB settings could not be read"));
  CHECK(!contains(unread.detail, "neither"));
}

TEST_CASE("INFO refused: replication, memory, version and cluster warn, saying why") {
  NodeFacts f = facts({}, {{"maxmemory-policy", "volatile-lru"},
                           {"maxmemory", "1000"},
                           {"appendonly", "yes"},
                           {"save", ""},
                           {"min-replicas-to-write", "1"},
                           {"min-replicas-max-lag", "10"}});
  f.info_unread = "INFO: NOPERM this user has no permissions to run the 'info' command";
  f.cluster_unread = *f.info_unread + "; CLUSTER INFO: NOPERM no permissions";
  for (const Finding& finding : {check_eviction(f), check_replication(f), check_memory(f),
                                 check_version(f), check_cluster(f)}) {
    CAPTURE(finding.check);
    CHECK(finding.status == CheckStatus::warn);
    CHECK(contains(finding.detail, "INFO: NOPERM"));
    CHECK(!finding.hint.empty());
  }
  CHECK(check_persistence(f).status == CheckStatus::ok);  // needs no INFO
  f.config["maxmemory-policy"] = "allkeys-lru";
  Finding evicting = check_eviction(f);
  CHECK(evicting.status == CheckStatus::fail);
  CHECK(contains(evicting.detail, "INFO could not be read to count the keys evicted"));
  f.config["maxmemory"] = "0";
  CHECK(check_memory(f).status == CheckStatus::ok);  // no maxmemory: nothing to be full
}

TEST_CASE("replication: short of the replicas min-replicas-to-write requires fails") {
  const std::map<std::string, std::string> bounded{{"min-replicas-to-write", "1"},
                                                   {"min-replicas-max-lag", "10"}};
  Finding alone = check_replication(facts(
      {{"role", "master"}, {"connected_slaves", "0"}, {"min_slaves_good_slaves", "0"}}, bounded));
  CHECK(alone.status == CheckStatus::fail);
  CHECK(alone.detail ==
        "0 good replicas (online, heard from within min-replicas-max-lag 10 s) of the 1 that "
        "min-replicas-to-write requires (0 attached): this primary refuses every write with "
        "NOREPLICAS");
  CHECK(contains(alone.hint, "lower min-replicas-to-write"));
  // Redis's own count decides where INFO gives it; else online replicas within the lag count.
  auto lagging = std::map<std::string, std::string>{
      {"role", "master"},
      {"connected_slaves", "2"},
      {"slave0", "ip=10.0.0.2,port=6379,state=online,offset=1,lag=11"},
      {"slave1", "ip=10.0.0.3,port=6379,state=online,offset=1,lag=0"}};
  CHECK(check_replication(facts(lagging, bounded)).status == CheckStatus::ok);
  auto two = bounded;
  two["min-replicas-to-write"] = "2";
  Finding short_of_two = check_replication(facts(lagging, two));
  CHECK(short_of_two.status == CheckStatus::fail);
  CHECK(contains(short_of_two.detail, "1 good replicas"));
  CHECK(contains(short_of_two.detail, "of the 2 that min-replicas-to-write requires (2 attached)"));
  lagging["min_slaves_good_slaves"] = "2";
  CHECK(check_replication(facts(lagging, two)).status == CheckStatus::ok);
  // Without min-replicas-max-lag Redis enforces nothing: no refusal, and nothing bounded.
  auto off = two;
  off["min-replicas-max-lag"] = "0";
  Finding unbounded = check_replication(facts(lagging, off));
  CHECK(unbounded.status == CheckStatus::warn);
  CHECK(contains(unbounded.detail, "min-replicas-max-lag 0, which turns it off"));
  CHECK(check_replication(facts({{"role", "master"}, {"connected_slaves", "0"}},
                                {{"min-replicas-to-write", "0"}, {"min-replicas-max-lag", "10"}}))
            .status == CheckStatus::warn);
}

TEST_CASE("locks: a lock whose PTTL could not be read warns, naming it; no expiry still fails") {
  const std::string refused = "PTTL: NOPERM this user has no permissions to run the 'pttl' command";
  std::vector<LockKey> locks{{"stock:{1}:lock", 0, refused}, {"stock:{2}:lock", 5000, {}}};
  Finding f = check_locks("10.0.0.1:6379", locks);
  CHECK(f.status == CheckStatus::warn);
  CHECK(f.detail == "1 locks whose expiry could not be read (" + refused +
                        "): stock:{1}:lock; not checked whether they block their item (or every "
                        "rebuild) forever");
  CHECK(contains(f.hint, "redis-cli -h 10.0.0.1 -p 6379 PTTL 'stock:{1}:lock'"));
  locks.push_back({"stock:{3}:lock", -1, {}});
  Finding forever = check_locks("10.0.0.1:6379", locks);
  CHECK(forever.status == CheckStatus::fail);
  CHECK(
      contains(forever.detail, "forever: stock:{3}:lock; the expiry of 1 more could not be read"));
}

TEST_CASE("holds: holds that could not be looked for warn, saying why, never ok") {
  const std::string refused = "TIME: NOPERM this user has no permissions to run the 'time' command";
  Finding one = check_holds("n:1", 0, refused);
  CHECK(one.status == CheckStatus::warn);
  CHECK(one.detail == "expired holds could not be looked for (" + refused + "): holds not checked");
  CHECK(contains(one.hint, "stockctl reap runs from cron every minute"));
  Finding cluster = check_cluster_holds("n:1", 0, 0, refused);
  CHECK(cluster.status == CheckStatus::warn);
  CHECK(contains(cluster.detail, "past-due cluster holds and orders could not be looked for"));
  CHECK(contains(cluster.hint, "stockctl reap --cluster"));
}

TEST_CASE("clock: a node whose TIME could not be read warns; the others are compared") {
  const std::string refused = "TIME: NOPERM this user has no permissions to run the 'time' command";
  std::vector<ClockSample> samples{{"a:1", 1'000'000, 1'000'000, 2, {}},
                                   {"b:1", 0, 0, 0, refused},
                                   {"c:1", 1'002'500, 1'000'000, 3, {}}};
  auto out = check_clocks(samples);
  REQUIRE(out.size() == 3);
  CHECK(out[1].node == "b:1");
  CHECK(out[1].status == CheckStatus::warn);
  CHECK(out[1].detail ==
        "its clock could not be read (" + refused + "): not compared with the other nodes'");
  CHECK(contains(out[1].hint, "redis-cli -h b -p 1 TIME"));
  CHECK(out[0].status == CheckStatus::ok);
  CHECK(out[2].status == CheckStatus::warn);  // 2500 ms off a:1, b:1 left out
  // One node, or one left: nothing to compare, but the one not read is not ok.
  auto alone = check_clocks({samples[1]});
  REQUIRE(alone.size() == 1);
  CHECK(alone[0].status == CheckStatus::warn);
  CHECK(alone[0].detail == "its clock could not be read (" + refused + ")");
  auto two = check_clocks({samples[0], samples[1]});
  CHECK(two[0].status == CheckStatus::ok);
  CHECK(two[0].detail == "no other node's clock could be read: nothing to compare");
  CHECK(two[1].status == CheckStatus::warn);
}

TEST_CASE("role: INFO's, else ROLE's; unknown when neither could be read, and said so") {
  CHECK(node_role(facts({{"role", "slave"}})) == NodeRole::replica);
  CHECK(node_role(facts({{"role", "master"}})) == NodeRole::primary);
  NodeFacts f = facts({});
  f.info_unread = "INFO: NOPERM this user has no permissions to run the 'info' command";
  f.role = "slave";
  CHECK(node_role(f) == NodeRole::replica);
  f.role = "master";
  CHECK(node_role(f) == NodeRole::primary);
  CHECK(check_replication(f).detail ==
        "INFO could not be read (" + *f.info_unread + "): replication not checked");
  f.role.reset();
  f.role_unread = "ROLE: NOPERM this user has no permissions to run the 'role' command";
  CHECK(node_role(f) == NodeRole::unknown);
  Finding unknown = check_replication(f);
  CHECK(unknown.status == CheckStatus::warn);
  CHECK(unknown.detail == "INFO could not be read (" + *f.info_unread + "), nor its role (" +
                              *f.role_unread +
                              "): not known whether it is a primary or a replica; replication "
                              "not checked");
  CHECK(contains(unknown.hint, "ACL +role"));
}
