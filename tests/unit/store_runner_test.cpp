#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "bulk/store_runner.h"
#include "bulk/windows_in_flight.h"
#include "core/split_layout.h"

using namespace stockctl;

namespace {

Reply nil() { return Reply{}; }

Reply text(Reply::Type type, const std::string& s) {
  Reply r;
  r.type = type;
  r.str = s;
  return r;
}

Reply value_or_nil(const std::map<std::string, std::string>& data, const std::string& key) {
  auto it = data.find(key);
  return it == data.end() ? nil() : text(Reply::Type::string, it->second);
}

// An in-memory stand-in for a server: SET (NX, GET, EX), GET, EXISTS of an item's holds key
// (1 when `held` has the item), and the put script as
// lua/put-2.lua defines it (an item's holds are all live, none expired). It records every
// command it is sent, which is what these tests check.
class FakeRedis : public Client {
 public:
  FakeRedis() : Client(ClientOptions{}) {}

  std::map<std::string, std::string> data;
  std::map<std::string, std::string> held;  ///< the sum of an item's held units, by stock key
  std::vector<std::string> sent;            ///< "SET stock:{a}", "GET stock:{a}", "PUT stock:{a}"
  std::vector<std::vector<std::string>> commands;  ///< each command in full

 protected:
  std::vector<CallResult> send(const std::vector<Call>& calls) override {
    std::vector<CallResult> out;
    for (const Call& call : calls) {
      CallResult r;
      r.state = CallResult::State::replied;
      r.reply = call.script ? put(call.args) : command(call.args);
      out.push_back(r);
    }
    return out;
  }

 private:
  Reply command(const std::vector<std::string>& argv) {
    const std::string& key = argv[1];
    sent.push_back(argv[0] + " " + key);
    commands.push_back(argv);
    if (argv[0] == "EXISTS") {
      Reply n;
      n.type = Reply::Type::integer;
      n.integer = held.count(key.substr(0, key.size() - std::string(":holds").size())) ? 1 : 0;
      return n;
    }
    if (argv[0] == "HGETALL") {  // a split item's buckets have no transfer recorded
      Reply none;
      none.type = Reply::Type::array;
      return none;
    }
    if (argv[0] == "PTTL") {  // every lock has 4.2 s left
      Reply n;
      n.type = Reply::Type::integer;
      n.integer = data.count(key) ? 4200 : -2;
      return n;
    }
    Reply previous = value_or_nil(data, key);
    if (argv[0] == "GET") return previous;
    bool nx = false, get = false;
    for (std::size_t i = 3; i < argv.size(); ++i) {
      nx = nx || argv[i] == "NX";
      get = get || argv[i] == "GET";
    }
    if (nx && !previous.is_nil()) return nil();
    data[key] = argv[2];
    return get ? previous : text(Reply::Type::status, "OK");
  }

  Reply put(const std::vector<std::string>& args) {
    const std::string& key = args[0];
    sent.push_back("PUT " + key);
    Reply previous = value_or_nil(data, key);
    // args: the keys (stock, lock), then value, mode, ttl, lock flag, counts held
    const bool counts_held = args[6] == "1";
    const long long units = counts_held && held.count(key) ? std::stoll(held[key]) : 0;
    Reply out;
    out.type = Reply::Type::array;
    auto verdict = [&](const char* v) {
      Reply n;
      n.type = Reply::Type::integer;
      n.integer = units;
      out.elements = {text(Reply::Type::string, v), previous, n};
      return out;
    };
    if (!previous.is_nil() && args[3] != "force") return verdict("kept");
    if (previous.is_nil() && data.count(args[1])) return verdict("locked");
    data[key] = std::to_string(std::max(std::stoll(args[2]) - units, 0LL));
    return verdict(previous.is_nil() ? "created" : "replaced");
  }
};

PutItem item(const std::string& sku, std::int64_t value, bool counts_held = false) {
  PutItem p;
  p.counts_held = counts_held;
  p.result.op = "rebuild";
  p.result.sku = sku;
  p.result.key = "stock:{" + sku + "}";
  p.value = value;
  return p;
}

const PutMode kInit{false, false, false};
const PutMode kRebuild{true, false, false};

}  // namespace

TEST_CASE("init stores missing keys with SET NX and reads back only the keys that existed") {
  FakeRedis redis;
  redis.data["stock:{b}"] = "7";
  std::vector<PutItem> items{item("a", 5), item("b", 5), item("c", 5)};
  PutRunner(redis, kInit, 0, LockTiming{}).run(items);
  CHECK(redis.sent == std::vector<std::string>{"SET stock:{a}", "SET stock:{b}", "SET stock:{c}",
                                               "GET stock:{b}"});
  CHECK(items[0].result.status == Status::ok);
  CHECK(items[1].result.status == Status::exists);
  CHECK(items[1].result.stock == 7);
  CHECK(items[2].result.status == Status::ok);
  CHECK(redis.data["stock:{b}"] == "7");
  CHECK(redis.data["stock:{c}"] == "5");
}

TEST_CASE(
    "rebuild looks every key up and runs the put script only where a key is missing or "
    "differs") {
  FakeRedis redis;
  redis.data["stock:{a}"] = "5";
  redis.data["stock:{b}"] = "9";
  std::vector<PutItem> items{item("a", 5), item("b", 5), item("c", 5)};
  PutRunner(redis, kRebuild, 0, LockTiming{}).run(items);
  // b differs: the script gives back expired holds (units the GET cannot see) before comparing.
  CHECK(redis.sent == std::vector<std::string>{"GET stock:{a}", "GET stock:{b}", "GET stock:{c}",
                                               "PUT stock:{b}", "PUT stock:{c}"});
  CHECK(items[0].result.status == Status::exists);
  CHECK(items[1].result.status == Status::drift);
  CHECK(items[1].result.expected == 5);
  CHECK(items[2].result.status == Status::ok);
  CHECK(redis.data["stock:{b}"] == "9");  // live keys are never touched
}

TEST_CASE("a missing key under someone else's init lock is left to the lock holder") {
  FakeRedis redis;
  redis.data["stock:{a}:lock"] = "their-token";
  std::vector<PutItem> items{item("a", 5)};
  PutRunner(redis, kRebuild, 0, LockTiming{1000, 0}).run(items);
  CHECK(items[0].result.status == Status::busy);
  // The error names the lock, its holder (none recorded in this value) and its time left.
  CHECK(items[0].result.error ==
        "stock:{a} is being initialized by another process (its init lock is held) after 0 ms: "
        "lock stock:{a}:lock is held (its value records no holder), 4.2 s left");
  CHECK(redis.data.count("stock:{a}") == 0);
}

TEST_CASE("windows are finished in order, each once its replies are in, the newest left started") {
  FakeRedis redis;
  redis.data["stock:{w1-0}"] = "1";  // window 1 needs a second step (GET); the others do not
  PutRunner runner(redis, kInit, 0, LockTiming{});
  WindowsInFlight<PutRunner> in_flight(runner);
  std::vector<std::string> finished;
  auto take_finished = [&] {
    for (const std::vector<PutItem>& window : in_flight.completed()) {
      finished.push_back(window.front().result.sku);
    }
  };
  std::vector<std::size_t> finished_after_submit;
  for (int w = 0; w < 4; ++w) {
    std::vector<PutItem> window;
    for (int i = 0; i < 3; ++i) window.push_back(item(fmt::format("w{}-{}", w, i), 1));
    in_flight.submit(std::move(window));
    take_finished();
    finished_after_submit.push_back(finished.size());
  }
  in_flight.drain();
  take_finished();
  CHECK(finished == std::vector<std::string>{"w0-0", "w1-0", "w2-0", "w3-0"});
  // After every submit only the newest window is left started.
  CHECK(finished_after_submit == std::vector<std::size_t>{0, 1, 2, 3});
  // Window 1's GET went out after window 2's SETs: finishing window 1 read those on the way.
  const std::vector<std::string> order(redis.sent.begin(), redis.sent.end());
  CHECK(std::find(order.begin(), order.end(), "GET stock:{w1-0}") >
        std::find(order.begin(), order.end(), "SET stock:{w2-2}"));
}

TEST_CASE("rows already decided (invalid) are handed over without a command") {
  FakeRedis redis;
  std::vector<PutItem> items{item("a", 5), item("b", 5)};
  items[0].pending = false;
  items[0].result.status = Status::invalid;
  PutRunner(redis, kInit, 0, LockTiming{}).run(items);
  CHECK(redis.sent == std::vector<std::string>{"SET stock:{b}"});
  CHECK(items[0].result.status == Status::invalid);
  CHECK(items[1].result.status == Status::ok);
}

TEST_CASE("init --force goes through the put script, which gives back expired holds first") {
  FakeRedis redis;
  redis.data["stock:{a}"] = "5";
  redis.held["stock:{a}"] = "2";
  std::vector<PutItem> items{item("a", 5), item("b", 6)};
  PutRunner(redis, PutMode::for_init().with_force(true), 0, LockTiming{}).run(items);
  // The GET first: a split item's layout record is not overwritten (next case).
  CHECK(redis.sent == std::vector<std::string>{"EXISTS stock:{a}:holds", "GET stock:{a}",
                                               "EXISTS stock:{b}:holds", "GET stock:{b}",
                                               "PUT stock:{a}", "PUT stock:{b}"});
  CHECK(items[0].result.status == Status::ok);
  CHECK(items[0].result.previous == std::optional<std::string>("5"));
  CHECK(items[0].result.stock == 5);  // a stock value is stored as it is
  CHECK(items[1].result.forced);
  CHECK_FALSE(items[1].result.previous);
}

TEST_CASE("init and rebuild judge a split item on its total and never write its layout record") {
  const std::string record = "stockctl:split:1 live aa 1,2 - - -";
  const std::optional<SplitRecord> layout = parse_split_record(record);
  REQUIRE(layout);
  for (const PutMode& mode : {PutMode::for_init(), PutMode::for_rebuild(),
                              PutMode::for_init().with_force(true).with_dry_run(true)}) {
    FakeRedis redis;
    redis.data["stock:{a}"] = record;
    redis.data[bucket_key("stock:{a}", layout->target, 0)] = "3";
    redis.data[bucket_key("stock:{a}", layout->target, 1)] = "4";
    std::vector<PutItem> items{item("a", 5)};
    PutRunner(redis, mode, 0, LockTiming{}).run(items);
    CHECK(redis.data["stock:{a}"] == record);
    CHECK(std::find_if(redis.sent.begin(), redis.sent.end(), [](const std::string& c) {
            return c.rfind("PUT", 0) == 0;
          }) == redis.sent.end());
    const ItemResult& r = items[0].result;
    if (mode.force) {  // the dry run of a forced write: it would write 5 over the total
      CHECK(r.status == Status::ok);
      CHECK(r.previous == std::optional<std::string>("7"));
    } else {
      CHECK(r.status == (mode.rebuild ? Status::drift : Status::exists));
      CHECK(r.stock == 7);
      CHECK(r.buckets == 2);
    }
  }
}

TEST_CASE("init of total - issued goes through the put script, which leaves out the units held") {
  FakeRedis redis;
  redis.held["stock:{a}"] = "2";
  std::vector<PutItem> items{item("a", 5, true)};
  PutRunner(redis, kInit, 0, LockTiming{}).run(items);
  CHECK(redis.sent == std::vector<std::string>{"PUT stock:{a}"});
  CHECK(items[0].result.stock == 3);
  CHECK(redis.data["stock:{a}"] == "3");
}

TEST_CASE("rebuild compares and stores total - issued less the units held") {
  FakeRedis redis;
  redis.data["stock:{a}"] = "7";  // 10 less 3 held: in step with the export
  redis.held["stock:{a}"] = "3";
  redis.data["stock:{b}"] = "9";  // 10 less 3 held would be 7
  redis.held["stock:{b}"] = "3";
  redis.held["stock:{c}"] = "3";   // the stock key lost, its holds left
  redis.data["stock:{d}"] = "10";  // the export's value: taken as in step, held units unread
  std::vector<PutItem> items{item("a", 10, true), item("b", 10, true), item("c", 10, true),
                             item("d", 10, true)};
  PutRunner(redis, kRebuild, 0, LockTiming{}).run(items);
  // Only rows whose live value differs from total - issued need the script, which reads the
  // held units in the same moment as the stock.
  CHECK(redis.sent == std::vector<std::string>{"GET stock:{a}", "GET stock:{b}", "GET stock:{c}",
                                               "GET stock:{d}", "PUT stock:{a}", "PUT stock:{b}",
                                               "PUT stock:{c}"});
  CHECK(items[0].result.status == Status::exists);
  CHECK(items[1].result.status == Status::drift);
  CHECK(items[1].result.expected == 7);
  CHECK(items[2].result.status == Status::ok);
  CHECK(items[2].result.stock == 7);
  CHECK(redis.data["stock:{c}"] == "7");
  CHECK(items[3].result.status == Status::exists);

  std::vector<PutItem> forced{item("a", 10, true), item("b", 10, true)};
  PutRunner(redis, PutMode::for_rebuild().with_force(true), 0, LockTiming{}).run(forced);
  CHECK(forced[0].result.previous == std::optional<std::string>("7"));
  CHECK(forced[1].result.previous == std::optional<std::string>("9"));
  CHECK(redis.data["stock:{b}"] == "7");
}

TEST_CASE("rebuild --force writes differing and missing keys, and reports every previous value") {
  FakeRedis redis;
  redis.data["stock:{a}"] = "5";
  redis.data["stock:{b}"] = "9";
  std::vector<PutItem> items{item("a", 5), item("b", 5), item("c", 5)};
  PutRunner(redis, PutMode::for_rebuild().with_force(true), 0, LockTiming{}).run(items);
  // Before each GET, an EXISTS says whether the item has holds (none has here).
  CHECK(redis.sent == std::vector<std::string>{"EXISTS stock:{a}:holds", "GET stock:{a}",
                                               "EXISTS stock:{b}:holds", "GET stock:{b}",
                                               "EXISTS stock:{c}:holds", "GET stock:{c}",
                                               "PUT stock:{b}", "PUT stock:{c}"});
  for (const PutItem& p : items) CHECK(p.result.status == Status::ok);
  CHECK(items[0].result.previous == std::optional<std::string>("5"));  // same value: not sent
  CHECK(items[1].result.previous == std::optional<std::string>("9"));
  CHECK(items[2].result.forced);
  CHECK_FALSE(items[2].result.previous);
  CHECK(redis.data["stock:{b}"] == "5");
}

TEST_CASE("rebuild --force of the value stored runs the put script for an item with holds") {
  FakeRedis redis;
  redis.data["stock:{a}"] = "5";
  redis.data["stock:{b}"] = "5";
  redis.held["stock:{b}"] = "3";  // expired or not, the script gives back what expired first
  std::vector<PutItem> items{item("a", 5), item("b", 5)};
  PutRunner(redis, PutMode::for_rebuild().with_force(true), 0, LockTiming{}).run(items);
  CHECK(redis.sent == std::vector<std::string>{"EXISTS stock:{a}:holds", "GET stock:{a}",
                                               "EXISTS stock:{b}:holds", "GET stock:{b}",
                                               "PUT stock:{b}"});
  for (const PutItem& p : items) CHECK(p.result.status == Status::ok);
  CHECK(items[1].result.previous == std::optional<std::string>("5"));

  // A dry run asks the script too, which counts the expired units in the previous value.
  redis.sent.clear();
  std::vector<PutItem> dry{item("a", 5), item("b", 5)};
  PutRunner(redis, PutMode::for_rebuild().with_force(true).with_dry_run(true), 0, LockTiming{})
      .run(dry);
  CHECK(redis.sent == std::vector<std::string>{"EXISTS stock:{a}:holds", "GET stock:{a}",
                                               "EXISTS stock:{b}:holds", "GET stock:{b}",
                                               "PUT stock:{b}"});
}

TEST_CASE("rebuild --force --ttl writes every live key, to set its expiry") {
  FakeRedis redis;
  redis.data["stock:{a}"] = "5";
  std::vector<PutItem> items{item("a", 5)};
  PutRunner(redis, PutMode::for_rebuild().with_force(true), 60, LockTiming{}).run(items);
  CHECK(redis.sent ==
        std::vector<std::string>{"EXISTS stock:{a}:holds", "GET stock:{a}", "PUT stock:{a}"});
  CHECK(items[0].result.previous == std::optional<std::string>("5"));
}
