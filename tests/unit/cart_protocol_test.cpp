// The cluster protocol of docs/holds.md against a scripted node: the protocol's code runs as it
// does against Redis, over a ClusterClient, and the node answers its scripts from a small model
// of lua/cart-2.lua, hold-4002.lua, settle-4002.lua, tombstone-1.lua and carts_due-1.lua. Each
// case stops the protocol at one step (as a crash would), then re-runs it or reaps, and checks
// the stock against a table of expected outcomes.

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "core/cart_keys.h"
#include "core/cart_states.h"
#include "core/hash_slot.h"
#include "fake_node.h"
#include "holds/cart_protocol.h"
#include "holds/cluster_settle.h"
#include "redis/cluster/router.h"
#include "redis/scripts/registry.h"

using namespace stockctl;
using namespace stockctl::test;

namespace {

constexpr int kPort = 7000;
constexpr std::int64_t kInitial = 10;

/// A model of one node holding every slot, as far as the protocol can see it.
class CartServer {
 public:
  std::map<std::string, std::int64_t> stock;  ///< stock key -> units
  std::map<std::string, std::int64_t> held;   ///< stock key -> units in group holds
  long long now_ms = 1000000;
  /// The script call (counted from 1) at which the node dies: it breaks the connection there
  /// and refuses new ones until revived. 0: never.
  int die_at = 0;
  /// Whether the call it dies at is applied first (its reply lost) or never reaches it.
  bool applied_before_dying = false;
  bool dead = false;

  Reply answer(const Argv& argv) {
    if (dead) throw ConnectionError("127.0.0.1:7000: connection reset by peer");
    if (argv[0] == "EVALSHA" && ++script_calls_ == die_at) {
      dead = true;
      if (applied_before_dying) run(argv);
      throw ConnectionError("127.0.0.1:7000: connection reset by peer");
    }
    return run(argv);
  }

  void revive() {
    dead = false;
    die_at = 0;
  }

  /// How many script calls the node was sent so far.
  int script_calls() const { return script_calls_; }

 private:
  Reply run(const Argv& argv) {
    if (argv[0] == "CLUSTER") return all_slots_at(kPort);
    if (argv[0] == "EXPIRE") return integer(1);
    if (argv[0] == "GET")
      return stock.count(argv[1]) ? bulk(std::to_string(stock[argv[1]])) : nil();
    REQUIRE(argv[0] == "EVALSHA");
    const std::size_t numkeys = std::stoul(argv[2]);
    const Argv keys(argv.begin() + 3, argv.begin() + 3 + static_cast<long>(numkeys));
    const Argv args(argv.begin() + 3 + static_cast<long>(numkeys), argv.end());
    if (argv[1] == cart_script().sha1) return cart(keys, args);
    if (argv[1] == hold_script().sha1) return hold(keys, args);
    if (argv[1] == settle_script().sha1) return settle(keys, args);
    if (argv[1] == tombstone_script().sha1) return tombstone(keys[0]);
    if (argv[1] == carts_due_script().sha1) return due(keys[0]);
    FAIL("unexpected script call");
    return nil();
  }

  struct Record {
    CartState state = CartState::preparing;
    int attempt = 0;
    long long exp = 0;
    long long deadline = 0;
    bool finished = false;
    std::string kind, lines, canon;
  };
  struct Group {
    std::string state;  ///< held, ordered, confirmed, released, cancelled, or !aborted
    std::vector<std::pair<std::string, std::int64_t>> lines;  ///< stock key, qty
    std::vector<std::int64_t> after;  ///< each line's stock after the hold: its first answer
    long long exp = 0;
  };

  static Reply record_reply(const Record* r, const std::string& status = "ok", int replayed = 0) {
    if (r == nullptr) {
      return array({bulk("missing"), integer(0), integer(0), integer(0), bulk(""),
                    bulk(status == "ok" ? "missing" : status), integer(0)});
    }
    return array({bulk(cart_state_name(r->state)), integer(r->attempt), integer(r->exp),
                  integer(r->finished ? 1 : 0), bulk(r->lines), bulk(status), integer(replayed)});
  }

  void to_finish(Record& r, CartState state, const std::string& due, const std::string& id) {
    r.state = state;
    r.finished = false;
    due_[due][id] = now_ms;
  }

  Reply cart(const Argv& keys, const Argv& args) {
    const std::string& op = args[0];
    const std::string& id = args[1];
    auto found = records_.find(keys[0]);
    Record* r = found == records_.end() ? nullptr : &found->second;
    if (op == "intent") {
      if (r != nullptr && !(r->state == CartState::aborted && r->finished)) {
        if (r->canon != args[3]) return error("STOCKCTL_CONFLICT " + args[2]);
        return record_reply(r, "ok", 1);
      }
      Record fresh;
      fresh.attempt = r == nullptr ? 1 : r->attempt + 1;
      fresh.kind = args[2];
      fresh.exp = fresh.kind == "hold" ? now_ms + std::stoll(args[5]) : 0;
      fresh.deadline = now_ms + std::stoll(args[6]);
      if (fresh.kind == "hold" && fresh.deadline > fresh.exp) fresh.deadline = fresh.exp;
      fresh.lines = args[4];
      fresh.canon = args[3];
      records_[keys[0]] = fresh;
      due_[keys[1]][id] = fresh.deadline;
      return record_reply(&records_[keys[0]]);
    }
    if (r == nullptr) return record_reply(nullptr);
    if (op == "decide") {
      if (r->state != CartState::preparing || std::to_string(r->attempt) != args[3]) {
        return record_reply(r);
      }
      const bool commit = args[2] == "commit" && now_ms < r->deadline;
      if (commit) {
        r->state = r->kind == "hold" ? CartState::held : CartState::ordered;
        r->finished = true;
        if (r->kind == "hold") due_[keys[1]][id] = r->exp;
        if (r->kind != "hold") due_[keys[1]].erase(id);
      } else {
        to_finish(*r, CartState::aborted, keys[1], id);
      }
      return record_reply(r);
    }
    if (op == "done") {
      if (cart_state_name(r->state) == args[2] && std::to_string(r->attempt) == args[3]) {
        r->finished = true;
        if (r->state == CartState::held) {
          due_[keys[1]][id] = r->exp;
        } else {
          due_[keys[1]].erase(id);
        }
      }
      return record_reply(r);
    }
    const CartState before = r->state;
    if (r->state == CartState::held && now_ms >= r->exp) {
      to_finish(*r, cart_transition(r->state, CartEvent::expiry).next, keys[1], id);
    }
    if (op == "reap") {
      if (r->state == CartState::preparing && now_ms >= r->deadline) {
        to_finish(*r, cart_transition(r->state, CartEvent::deadline).next, keys[1], id);
      } else if (r->finished && r->state == before) {
        due_[keys[1]].erase(id);
      }
      return record_reply(r);
    }
    REQUIRE(op == "settle");
    const CartEvent event = args[2] == "confirm"   ? CartEvent::confirm
                            : args[2] == "release" ? CartEvent::release
                                                   : CartEvent::cancel;
    const CartTransition t = cart_transition(r->state, event);
    if (t.next != r->state) to_finish(*r, t.next, keys[1], id);
    switch (t.answer) {
      case SettleAnswer::ok:
        return record_reply(r, "ok");
      case SettleAnswer::replayed:
        return record_reply(r, "ok", 1);
      case SettleAnswer::expired:
        return record_reply(r, "expired");
      case SettleAnswer::released:
        return record_reply(r, "released");
      case SettleAnswer::conflict:
        return record_reply(r, "conflict");
      default:
        return record_reply(r, "missing");
    }
  }

  // hold-4002: KEYS record, index, then stock, holds, held per line; ARGV kind, id, life, ...,
  // then sku, qty, init per line.
  Reply hold(const Argv& keys, const Argv& args) {
    const std::size_t n = (keys.size() - 2) / 3;
    auto found = groups_.find(keys[0]);
    if (found != groups_.end()) {
      if (found->second.state == "!aborted") return error("STOCKCTL_CONFLICT " + args[0]);
      // A repeat answers the first answer again, as the record rebuilds it.
      std::vector<Reply> out{integer(1), integer(found->second.exp)};
      for (std::int64_t after : found->second.after) {
        out.push_back(integer(after));
        out.push_back(integer(after));
      }
      return array(out);
    }
    Group group;
    group.state = args[0] == "hold" ? "held" : "ordered";
    group.exp = args[0] == "hold" ? now_ms + std::stoll(args[2]) : 0;
    bool short_line = false;
    std::vector<Reply> out{integer(0), integer(group.exp)};
    for (std::size_t i = 0; i < n; ++i) {
      const std::string& key = keys[2 + 3 * i];
      const std::int64_t qty = std::stoll(args[9 + 3 * i + 1]);
      group.lines.emplace_back(key, qty);
      const bool enough = stock[key] >= qty;
      short_line = short_line || !enough;
      out.push_back(integer(enough ? stock[key] - qty : -2));
      out.push_back(integer(enough ? stock[key] - qty : stock[key]));
    }
    if (short_line) return array(out);
    for (const auto& [key, qty] : group.lines) {
      stock[key] -= qty;
      if (group.state == "held") held[key] += qty;
      group.after.push_back(stock[key]);
    }
    groups_[keys[0]] = group;
    return array(out);
  }

  // settle-4002 on a group: KEYS record, index, then three per line; ARGV action, id, ...
  Reply settle(const Argv& keys, const Argv& args) {
    auto found = groups_.find(keys[0]);
    if (found == groups_.end()) return array({bulk("missing"), integer(0)});
    Group& g = found->second;
    const std::string& action = args[0];
    std::string status = "ok";
    int replayed = 0;
    if (g.state == "held" && action == "confirm") {
      for (const auto& [key, qty] : g.lines) held[key] -= qty;
      g.state = "confirmed";
    } else if (g.state == "held") {
      for (const auto& [key, qty] : g.lines) {
        held[key] -= qty;
        stock[key] += qty;
      }
      g.state = "released";
    } else if ((g.state == "ordered" || g.state == "confirmed") && action == "cancel") {
      for (const auto& [key, qty] : g.lines) stock[key] += qty;
      g.state = "cancelled";
    } else if ((g.state == "confirmed" && action == "confirm") ||
               (g.state == "released" && action != "confirm") ||
               (g.state == "cancelled" && action == "cancel")) {
      replayed = 1;
    } else {
      status = "conflict";
    }
    std::vector<Reply> out{bulk(status), integer(replayed)};
    for (const auto& line : g.lines) out.push_back(integer(stock[line.first]));
    return array(out);
  }

  Reply tombstone(const std::string& key) {
    if (groups_.count(key)) return integer(0);
    groups_[key].state = "!aborted";
    return integer(1);
  }

  Reply due(const std::string& key) {
    std::vector<Reply> ids;
    for (const auto& [id, at] : due_[key]) {
      if (at <= now_ms) ids.push_back(bulk(id));
    }
    return array(ids);
  }

  std::map<std::string, Record> records_;
  std::map<std::string, Group> groups_;
  std::map<std::string, std::map<std::string, long long>> due_;  ///< due key -> id -> time
  int script_calls_ = 0;
};

/// What a test stops the protocol with: a crash right after a step.
struct Crash {
  std::string step;
};

// Two items in two slots (so two slot groups) and a third in the first item's slot.
const std::vector<std::string>& skus() {
  static const std::vector<std::string> found = [] {
    const KeyScheme scheme;
    const int slot = key_slot(stock_key(scheme, "a"));
    for (int n = 0;; ++n) {
      std::string sku = "c" + std::to_string(n);
      if (key_slot(stock_key(scheme, sku)) == slot) return std::vector<std::string>{"a", "b", sku};
    }
  }();
  return found;
}

struct Fixture {
  CartServer server;
  FakeNodes nodes;
  std::unique_ptr<ClusterClient> client;
  std::unique_ptr<CartStore> store;
  HoldOptions options;

  Fixture() {
    nodes.add(kPort, [this](const Argv& argv) { return server.answer(argv); });
    // A dead node refuses connections, as a killed process's port does.
    ConnectionFactory open = [this](const ConnectOptions& at) {
      if (server.dead) throw ConnectionError("127.0.0.1:7000: connection refused");
      return nodes.factory()(at);
    };
    client = std::make_unique<ClusterClient>(FakeNodes::at(kPort), ClientOptions{60, 0, 0}, open);
    ChangeLogSettings no_log;
    no_log.enabled = false;
    store = std::make_unique<CartStore>(CartStore{*client, KeyScheme{}, no_log});
    for (const std::string& sku : skus()) server.stock[stock_key(store->scheme, sku)] = kInitial;
  }

  Cart cart(const std::string& id) {
    Cart c;
    c.id = id;
    c.lines = {HoldLine{skus()[0], 1}, HoldLine{skus()[1], 2}, HoldLine{skus()[2], 3}};
    prepare_cart(c, store->scheme);
    REQUIRE(c.status == Status::ok);
    return c;
  }

  // Runs the protocol for `id`, stopped right after `step` ("" runs it to the end).
  Cart run(CartKind kind, const std::string& id, const std::string& step = "") {
    ProtocolHooks hooks;
    hooks.prepare_budget_ms = 5000;
    hooks.after_step = [step](const std::string& at) {
      if (at == step) throw Crash{at};
    };
    Cart c = cart(id);
    try {
      CartProtocol(*store, kind, options, hooks).run(c);
    } catch (const Crash&) {
      c.status = Status::error;
      c.error = "crashed";
    }
    return c;
  }

  std::vector<std::int64_t> stocks() {
    std::vector<std::int64_t> out;
    for (const std::string& sku : skus())
      out.push_back(server.stock[stock_key(store->scheme, sku)]);
    return out;
  }
  std::vector<std::int64_t> helds() {
    std::vector<std::int64_t> out;
    for (const std::string& sku : skus()) out.push_back(server.held[stock_key(store->scheme, sku)]);
    return out;
  }
};

const std::vector<std::int64_t> kTaken = {kInitial - 1, kInitial - 2, kInitial - 3};
const std::vector<std::int64_t> kUntouched = {kInitial, kInitial, kInitial};
const std::vector<std::int64_t> kNoneHeld = {0, 0, 0};
const std::vector<std::int64_t> kAllHeld = {1, 2, 3};

/// A crash point of hold and order, and whether the cart was decided (committed) by then.
struct CrashPoint {
  const char* step;
  bool decided;
};

// A hold or order made is finished by its decision (its groups were held, or ordered, by their
// prepare): the finish steps come only after an abort, or with confirm, release and cancel.
const std::vector<CrashPoint> kCrashPoints = {
    {"intent", false}, {"prepare:1", false}, {"prepare:2", false}, {"decide", true}};

}  // namespace

TEST_CASE("the cart's lines fall in two slot groups, so that every crash point is reached") {
  Fixture f;
  const Cart c = f.cart("o");
  CHECK(groups_of(c.keys).size() == 2);
  std::vector<std::string> steps;
  ProtocolHooks hooks;
  hooks.after_step = [&steps](const std::string& step) { steps.push_back(step); };
  Cart ordered = f.cart("o");
  CartProtocol(*f.store, CartKind::order, f.options, hooks).run(ordered);
  CHECK(ordered.status == Status::ok);
  CHECK(steps == std::vector<std::string>{"intent", "prepare:1", "prepare:2", "decide"});
  // An order is finished by its decision: its groups were ordered by their prepare.
  CHECK(f.stocks() == kTaken);
  CHECK(f.helds() == kNoneHeld);
}

TEST_CASE("an order stopped at each step is finished once by a re-run") {
  for (const CrashPoint& point : kCrashPoints) {
    CAPTURE(point.step);
    Fixture f;
    f.run(CartKind::order, "o", point.step);
    const Cart again = f.run(CartKind::order, "o");
    CHECK(again.status == Status::ok);
    CHECK(again.line_status == std::vector<Status>(3, Status::ok));
    // The answer shows each line's stock after the order, as the first run would have.
    CHECK(again.stock == std::vector<std::optional<std::int64_t>>(kTaken.begin(), kTaken.end()));
    CHECK(f.stocks() == kTaken);
    CHECK(f.helds() == kNoneHeld);
    // And a third run changes nothing.
    CHECK(f.run(CartKind::order, "o").replayed);
    CHECK(f.stocks() == kTaken);
  }
}

TEST_CASE("a hold stopped at each step is held once by a re-run, and confirmed once") {
  for (const CrashPoint& point : kCrashPoints) {
    CAPTURE(point.step);
    Fixture f;
    f.run(CartKind::hold, "h", point.step);
    const Cart again = f.run(CartKind::hold, "h");
    CHECK(again.status == Status::ok);
    CHECK(again.expires_at_ms.has_value());
    CHECK(f.stocks() == kTaken);
    CHECK(f.helds() == kAllHeld);
    const Settled confirmed = settle_on_cluster(*f.store, "confirm", "h", ProtocolHooks{});
    CHECK(confirmed.status == Status::ok);
    CHECK(f.stocks() == kTaken);
    CHECK(f.helds() == kNoneHeld);
  }
}

TEST_CASE("reap after a crash past the deadline settles each cart all or none") {
  for (CartKind kind : {CartKind::order, CartKind::hold}) {
    for (const CrashPoint& point : kCrashPoints) {
      CAPTURE(point.step);
      CAPTURE(kind_name(kind));
      Fixture f;
      f.options.expire_s = 60;
      f.run(kind, "c", point.step);
      f.server.now_ms += 3600 * 1000;  // past the prepare deadline, and the hold's expiry
      reap_on_cluster(*f.store);
      // A decided order stays sold; a decided hold expired and came back; the rest aborted.
      const bool sold = kind == CartKind::order && point.decided;
      CHECK(f.stocks() == (sold ? kTaken : kUntouched));
      CHECK(f.helds() == kNoneHeld);
      // The same id may then try again: aborted and given back is as good as never tried.
      if (!point.decided) {
        f.server.now_ms += 1;
        CHECK(f.run(kind, "c").status == Status::ok);
        CHECK(f.stocks() == kTaken);
      }
    }
  }
}

TEST_CASE("confirm, release and cancel stopped at each step take effect once when re-run") {
  struct Settle {
    CartKind kind;
    const char* action;
    std::vector<std::int64_t> stocks;
    std::vector<std::int64_t> helds;
  };
  const std::vector<Settle> settles = {
      {CartKind::hold, "confirm", kTaken, kNoneHeld},
      {CartKind::hold, "release", kUntouched, kNoneHeld},
      {CartKind::hold, "cancel", kUntouched, kNoneHeld},
      {CartKind::order, "cancel", kUntouched, kNoneHeld},
  };
  for (const Settle& s : settles) {
    for (const char* step : {"decide", "finish:1", "finish:2"}) {
      CAPTURE(s.action);
      CAPTURE(step);
      Fixture f;
      REQUIRE(f.run(s.kind, "x").status == Status::ok);
      ProtocolHooks stop;
      stop.after_step = [step](const std::string& at) {
        if (at == step) throw Crash{at};
      };
      CHECK_THROWS_AS(settle_on_cluster(*f.store, s.action, "x", stop), Crash);
      const Settled again = settle_on_cluster(*f.store, s.action, "x", ProtocolHooks{});
      CHECK(again.status == Status::ok);
      CHECK(again.replayed);
      CHECK(f.stocks() == s.stocks);
      CHECK(f.helds() == s.helds);
    }
  }
}

TEST_CASE("an order a short line refused, stopped while giving back, gives back once") {
  for (const char* step : {"decide", "finish:1", "finish:2"}) {
    CAPTURE(step);
    Fixture f;
    f.server.stock[stock_key(f.store->scheme, "b")] = 1;  // b=2 is short
    const std::vector<std::int64_t> before = f.stocks();
    f.run(CartKind::order, "o", step);
    const Cart again = f.run(CartKind::order, "o");
    CHECK(again.status == Status::insufficient);
    CHECK(f.stocks() == before);
    CHECK(f.helds() == kNoneHeld);
  }
}

TEST_CASE("a node that dies at any step leaves each cart one answer, and a re-run finishes it") {
  // An order sends 4 scripts: intent, the prepare of each of its two groups, decide. Whether
  // the node died before or after applying the call it had on the wire, the cart's outcome is
  // unknown; the next cart, whose intent is never sent, is not applied.
  for (int at : {1, 2, 3, 4}) {
    for (bool applied : {false, true}) {
      CAPTURE(at);
      CAPTURE(applied);
      Fixture f;
      f.server.die_at = at;
      f.server.applied_before_dying = applied;
      const Cart cut = f.run(CartKind::order, "o1");
      CHECK(cut.status == Status::error);
      CHECK(cut.error.rfind("outcome unknown: ", 0) == 0);
      CHECK(cut.error.find("with the same id finishes it") != std::string::npos);
      CHECK(cut.line_status.empty());
      const std::vector<std::int64_t> after_first = f.stocks();
      const Cart next = f.run(CartKind::order, "o2");
      CHECK(next.status == Status::error);
      CHECK(next.error.rfind("not applied: ", 0) == 0);
      CHECK(f.stocks() == after_first);
      f.server.revive();
      CHECK(f.run(CartKind::order, "o1").status == Status::ok);
      CHECK(f.run(CartKind::order, "o2").status == Status::ok);
      CHECK(f.stocks() == std::vector<std::int64_t>{kInitial - 2, kInitial - 4, kInitial - 6});
      CHECK(f.helds() == kNoneHeld);
    }
  }
}

TEST_CASE("a settle whose node dies says whether it was applied, and a re-run finishes it") {
  for (int at : {1, 2, 3}) {  // the record's settle, then the settle of each group
    for (bool applied : {false, true}) {
      CAPTURE(at);
      CAPTURE(applied);
      Fixture f;
      REQUIRE(f.run(CartKind::hold, "h1").status == Status::ok);
      REQUIRE(f.run(CartKind::hold, "h2").status == Status::ok);
      f.server.die_at = f.server.script_calls() + at;
      f.server.applied_before_dying = applied;
      const Settled cut = settle_on_cluster(*f.store, "confirm", "h1", ProtocolHooks{});
      CHECK(cut.status == Status::error);
      CHECK(cut.error.rfind("outcome unknown: ", 0) == 0);
      const Settled next = settle_on_cluster(*f.store, "release", "h2", ProtocolHooks{});
      CHECK(next.status == Status::error);
      CHECK(next.error.rfind("not applied: ", 0) == 0);
      f.server.revive();
      CHECK(settle_on_cluster(*f.store, "confirm", "h1", ProtocolHooks{}).status == Status::ok);
      CHECK(settle_on_cluster(*f.store, "release", "h2", ProtocolHooks{}).status == Status::ok);
      // h1 sold, h2 given back: each line down by its quantity once.
      CHECK(f.stocks() == kTaken);
      CHECK(f.helds() == kNoneHeld);
    }
  }
}
