// The cluster protocol of docs/holds.md: intent, prepare per slot group, decide, finish.

#include "bulk/cart_protocol.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <map>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/text.h"
#include "bulk/replica_ack.h"
#include "core/cart_plan.h"
#include "core/error_reply.h"
#include "core/hash_slot.h"
#include "core/outcome.h"
#include "core/quantity.h"
#include "redis/errors.h"
#include "redis/scripts/registry.h"

namespace stockctl {

void stop_if_asked(const std::string& step) {
  static const char* const stop_at = std::getenv("STOCKCTL_TEST_STOP_AT");
  if (stop_at != nullptr && step == stop_at) ::kill(::getpid(), SIGKILL);
}

int cart_slot(std::string_view key) { return key_slot(key); }

std::string due_index_pattern(const KeyScheme& scheme) {
  return fmt::format("stockctl:carts-due:{}{{*}}", escape_glob(scheme.prefix));
}

std::string group_index_key(const KeyScheme& scheme, int slot) {
  return fmt::format("stockctl:cart-groups:{}{{{}}}", scheme.prefix, slot_tag(slot));
}

namespace {

/// A group's holds last this long: no node's clock reaches it, so neither the lazy expiry of
/// the items' scripts nor reap-1.lua ever returns a group's units by itself; the record's
/// decision does.
constexpr long long kGroupLifeMs = 10LL * 365 * 24 * 3600 * 1000;
/// How long an attempt may take to hold every group before reap may abort it.
constexpr long long kPrepareBudgetMs = 120000;
/// How long a record that has no --request-ttl of its own (a tombstone written by reap or
/// release) is kept.
constexpr long long kDefaultKeepS = 86400;
/// The canon of a group an aborted attempt never held: a late prepare of it is refused.
constexpr const char* kTombstone = "!aborted";
/// How many attempts a hold or order makes when reap (or its deadline) aborts one.
constexpr int kAttempts = 3;

const std::string& tag_of(int slot) { return slot_tag(slot); }

// One step of the protocol. With --wait-replicas N a step counts only once N replicas have it:
// a failover that lost a decision after some groups were finished would leave a half order, so
// an unacknowledged step stops the run (the same command, or reap, carries it on).
void require_durable(Context& ctx, const Call& call, const CallResult& result) {
  if (result.state != CallResult::State::replied) throw ConnectionError(result.error);
  if (call.writes && !acknowledged(result, ctx.redis().options()) && !result.reply.is_error()) {
    throw NotDurableError(
        fmt::format("{}; stopped before the next step (run the same command again, or reap)",
                    unacknowledged(result, ctx.redis().options())));
  }
}

// Steps of different records (reap) are independent, so they may share one pipeline: the
// replies come back in order, each checked as durable_call checks one.
std::vector<Reply> durable_run(Context& ctx, const std::vector<Call>& calls) {
  if (calls.empty()) return {};
  std::vector<CallResult> results = ctx.redis().run(calls);
  std::vector<Reply> replies;
  replies.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    require_durable(ctx, calls[i], results[i]);
    replies.push_back(std::move(results[i].reply));
  }
  return replies;
}

Reply durable_call(Context& ctx, const Call& call) {
  return std::move(durable_run(ctx, {call})[0]);
}

std::string cart_record_key(const KeyScheme& scheme, const std::string& id) {
  if (scheme.hashtag) return fmt::format("stockctl:cart:{}{{{}}}", scheme.prefix, id);
  return fmt::format("stockctl:cart:{}{}", scheme.prefix, id);
}

std::string due_key(const KeyScheme& scheme, int slot) {
  return fmt::format("stockctl:carts-due:{}{{{}}}", scheme.prefix, tag_of(slot));
}

std::string group_record_key(const KeyScheme& scheme, int slot, const std::string& gid) {
  return fmt::format("stockctl:cart-group:{}{{{}}}:{}", scheme.prefix, tag_of(slot), gid);
}

std::vector<SlotGroup> groups_of(const std::vector<std::string>& keys) {
  std::vector<int> slots;
  slots.reserve(keys.size());
  for (const std::string& key : keys) slots.push_back(key_slot(key));
  return group_by_slot(slots);
}

/// The record as cart-2.lua answers it.
struct CartRecord {
  std::string state;
  std::int64_t attempt = 0;
  std::int64_t exp = 0;
  bool finished = false;
  std::string lines;
  std::string status;
  bool replayed = false;
  std::string conflict;  ///< intent: the error reply when the id is taken
};

/// The calls of cart-2.lua for one id.
class Coordinator {
 public:
  Coordinator(Context& ctx, const std::string& id)
      : ctx_(ctx),
        id_(id),
        record_(cart_record_key(ctx.scheme(), id)),
        due_(due_key(ctx.scheme(), key_slot(record_))) {}

  /// The record after `op`; throws NotDurableError as durable_call does, after last() has
  /// taken the record the primary answered.
  CartRecord op(const std::string& op, std::vector<std::string> args) {
    const Call sent = call(op, std::move(args));
    std::vector<CallResult> results = ctx_.redis().run({sent});
    if (results[0].state != CallResult::State::replied) throw ConnectionError(results[0].error);
    last_ = parse(results[0].reply);
    require_durable(ctx_, sent, results[0]);
    return last_;
  }

  /// The record as the last op answered it (applied on the primary, even when not durable).
  const CartRecord& last() const { return last_; }

  Call call(const std::string& op, std::vector<std::string> args) const {
    args.insert(args.begin(), {op, id_});
    Call call = Call::script_call(cart_script(), {record_, due_}, std::move(args));
    call.idempotent = true;  // every op answers the same when sent again
    call.writes = true;
    return call;
  }

  CartRecord parse(const Reply& r) const {
    CartRecord rec;
    if (r.error_kind() == ErrorReply::stockctl_conflict) {
      rec.conflict = r.str;
      return rec;
    }
    if (r.type != Reply::Type::array || r.elements.size() != 7) {
      throw StockctlError(
          fmt::format("{}: unexpected reply from the cart script: {}", record_, describe_reply(r)));
    }
    rec.state = r.elements[0].str;
    rec.attempt = r.elements[1].integer;
    rec.exp = r.elements[2].integer;
    rec.finished = r.elements[3].integer == 1;
    rec.lines = r.elements[4].str;
    rec.status = r.elements[5].str;
    rec.replayed = r.elements[6].integer == 1;
    return rec;
  }

 private:
  Context& ctx_;
  std::string id_;
  std::string record_;
  std::string due_;
  CartRecord last_;
};

/// Whether a record in `state` stands for a hold or order that was made (decided, and not
/// aborted), whatever became of it since.
bool made(const std::string& state) {
  return !state.empty() && state != "preparing" && state != "aborted" && state != "missing";
}

/// What finishing did.
struct Finish {
  std::vector<std::optional<std::int64_t>> stocks;  ///< per line, after its group's settle
  std::int64_t units_back = 0;                      ///< units this call gave back to stock
};

// Before an aborted or expired attempt's group is released: writes a tombstone where the group
// has no record, so that a prepare of it still in flight is refused. True when the group was
// never held (there is nothing to give back).
Call tombstone_call(const std::string& record, long long keep_s) {
  Call call = Call::script_call(tombstone_script(), {record},
                                {kTombstone, std::to_string(std::max(keep_s, 60LL))});
  call.idempotent = true;
  call.writes = true;
  return call;
}

bool never_held_reply(const std::string& record, const Reply& r) {
  if (r.type != Reply::Type::integer) {
    throw StockctlError(fmt::format("{}: unexpected reply from the tombstone script: {}", record,
                                    describe_reply(r)));
  }
  return r.integer != 0;
}

bool never_held(Context& ctx, const std::string& record, long long keep_s) {
  return never_held_reply(record, durable_call(ctx, tombstone_call(record, keep_s)));
}

/// What finishing a record in `state` does to each of its groups. An aborted attempt cancels
/// them: a hold's groups are held (cancel gives the units back, as release does), an order's
/// were deducted by their prepare (cancel gives them back as a sale).
std::string finish_action(const std::string& state) {
  return state == "aborted" ? "cancel" : group_action(state);
}

/// Whether a record in `state` gives its groups back, so that each first gets a tombstone where
/// it was never prepared (a late prepare of this attempt is then refused).
bool tombstone_first(const std::string& state) {
  return state == "aborted" || state == "released" || state == "expired";
}

/// Whether a group's settle by `action` for a record in `state` gives units back to stock.
bool gives_back(const std::string& state, const std::string& action) {
  return action == "release" || state == "aborted";
}

/// One slot group of a record, as finishing it needs.
struct GroupStep {
  std::string gid;
  std::string record;
  std::string index;
  std::vector<std::size_t> lines;  ///< the record's lines in this group
  std::vector<RecordLine> group_lines;
};

std::vector<GroupStep> group_steps(const KeyScheme& scheme, const std::string& id,
                                   std::int64_t attempt, const std::vector<RecordLine>& lines) {
  std::vector<std::string> keys;
  keys.reserve(lines.size());
  for (const RecordLine& line : lines) keys.push_back(line.key);
  std::vector<GroupStep> steps;
  for (const SlotGroup& group : groups_of(keys)) {
    GroupStep step;
    step.gid = group_hold_id(id, group.slot, attempt);
    step.record = group_record_key(scheme, group.slot, step.gid);
    step.index = group_index_key(scheme, group.slot);
    step.lines = group.lines;
    for (std::size_t i : group.lines) step.group_lines.push_back(lines[i]);
    steps.push_back(std::move(step));
  }
  return steps;
}

// A settle script's answer for a group: its lines' stocks after it, and the units it gave
// back now (`back`: the settle returns units; applied by this call, not a replay).
void read_settle(const GroupStep& step, bool back, const Reply& r,
                 std::vector<std::optional<std::int64_t>>& stocks, std::int64_t& units_back) {
  // settle-4002.lua names the line whose stored value is corrupt: the error names its item.
  if (std::optional<CorruptLine> bad = r.is_error() ? corrupt_line(r.str) : std::nullopt;
      bad && bad->index < step.group_lines.size()) {
    const RecordLine& line = step.group_lines[bad->index];
    ItemResult item;
    item.key = line.key;
    apply_error_reply(item, bad->reply);
    throw StockctlError(
        fmt::format("item '{}': {} (the decision is kept: once the value is "
                    "repaired, run the same command again, or reap)",
                    escape_control(line.sku), item.error));
  }
  if (r.is_error() || r.type != Reply::Type::array || r.elements.size() < 2) {
    throw StockctlError(fmt::format("{}: unexpected reply from the settle script: {}", step.record,
                                    describe_reply(r)));
  }
  const bool applied = r.elements[0].str == "ok" && r.elements[1].integer == 0;
  for (std::size_t k = 0; k < step.lines.size() && 2 + k < r.elements.size(); ++k) {
    const std::int64_t stock = r.elements[2 + k].integer;
    if (stock >= 0 && step.lines[k] < stocks.size()) stocks[step.lines[k]] = stock;
    if (applied && back) units_back += step.group_lines[k].qty;
  }
}

Call keep_call(const std::string& record, long long keep_s) {
  return Call::idempotent_write({"EXPIRE", record, std::to_string(std::max(keep_s, 60LL))});
}

// Drives every group of the record to its state, each step idempotent: a group is confirmed,
// released or cancelled once whoever finishes (this run, a re-run, reap). Before releasing, a
// group that was never held gets a tombstone, so that a prepare of this attempt still in flight
// (a paused process) is refused instead of holding units nobody would give back.
Finish finish_groups(Context& ctx, const std::string& id, const CartRecord& rec,
                     const std::vector<RecordLine>& lines, long long keep_s) {
  Finish finish;
  finish.stocks.assign(lines.size(), std::nullopt);
  const std::string action = finish_action(rec.state);
  if (action.empty() || rec.finished) return finish;
  const std::vector<GroupStep> steps = group_steps(ctx.scheme(), id, rec.attempt, lines);
  for (std::size_t g = 0; g < steps.size(); ++g) {
    const GroupStep& step = steps[g];
    if (tombstone_first(rec.state) && never_held(ctx, step.record, keep_s)) {
      stop_if_asked(fmt::format("finish:{}", g + 1));
      continue;
    }
    Reply r = durable_call(
        ctx, settle_call(ctx, step.record, step.index, action, step.gid, step.group_lines));
    read_settle(step, gives_back(rec.state, action), r, finish.stocks, finish.units_back);
    ctx.redis().call(keep_call(step.record, keep_s));
    stop_if_asked(fmt::format("finish:{}", g + 1));
  }
  Coordinator(ctx, id).op("done", {rec.state, std::to_string(rec.attempt)});
  return finish;
}

std::string canon_of(CartKind kind, const Cart& cart) {
  std::vector<std::int64_t> qtys;
  qtys.reserve(cart.lines.size());
  for (const HoldLine& line : cart.lines) qtys.push_back(line.qty);
  return cart_canon(kind_name(kind), cart.keys, qtys);
}

std::string lines_text(const Cart& cart) {
  nlohmann::json lines = nlohmann::json::array();
  for (std::size_t i = 0; i < cart.lines.size(); ++i) {
    lines.push_back({cart.lines[i].sku, cart.keys[i], std::to_string(cart.lines[i].qty), ""});
  }
  return lines.dump();
}

std::vector<RecordLine> cart_record_lines(const Cart& cart) {
  std::vector<RecordLine> lines;
  for (std::size_t i = 0; i < cart.lines.size(); ++i) {
    lines.push_back(RecordLine{cart.lines[i].sku, cart.keys[i], cart.lines[i].qty});
  }
  return lines;
}

long long prepare_budget_ms() {
  // Test-only: a short deadline, so that the tests of reap after a crash need not wait.
  if (const char* ms = std::getenv("STOCKCTL_TEST_PREPARE_MS")) return std::atoll(ms);
  return kPrepareBudgetMs;
}

}  // namespace

CartProtocol::CartProtocol(Context& ctx, CartKind kind, const HoldOptions& o)
    : ctx_(ctx), kind_(kind), o_(o) {}

namespace {

std::vector<Cart> group_carts(const KeyScheme& scheme, const Cart& cart, std::int64_t attempt) {
  std::vector<Cart> carts;
  for (const SlotGroup& group : groups_of(cart.keys)) {
    Cart g;
    g.id = group_hold_id(cart.id, group.slot, attempt);
    for (std::size_t i : group.lines) {
      g.lines.push_back(cart.lines[i]);
      g.keys.push_back(cart.keys[i]);
    }
    g.record_key = group_record_key(scheme, group.slot, g.id);
    g.index_key = group_index_key(scheme, group.slot);
    carts.push_back(std::move(g));
  }
  return carts;
}

// The groups' answers as the cart's: each line's status and stock; the cart takes the status
// of its most serious line (or of a group that got no answer).
void merge_answers(Cart& cart, const std::vector<Cart>& groups) {
  cart.line_status.assign(cart.lines.size(), Status::ok);
  cart.stock.assign(cart.lines.size(), std::nullopt);
  std::map<std::string, std::size_t> line_of;
  for (std::size_t i = 0; i < cart.keys.size(); ++i) line_of[cart.keys[i]] = i;
  ExitFold fold;
  cart.status = Status::ok;
  for (const Cart& g : groups) {
    if (g.line_status.size() != g.keys.size()) {
      fail(cart, g.status, g.error);
      continue;
    }
    for (std::size_t k = 0; k < g.keys.size(); ++k) {
      const std::size_t i = line_of[g.keys[k]];
      cart.line_status[i] = g.line_status[k];
      cart.stock[i] = g.stock[k];
      fold.add(g.line_status[k]);
    }
  }
  if (cart.status != Status::ok) {
    // A group that failed as a whole (an error, a conflict) says nothing of its lines: no line
    // claims a status then, as on one Redis.
    cart.line_status.clear();
    cart.stock.clear();
    return;
  }
  for (std::size_t i = 0; i < cart.lines.size(); ++i) {
    if (exit_code_for(cart.line_status[i]) == fold.code() && fold.code() != ExitCode::ok) {
      cart.status = cart.line_status[i];
      break;
    }
  }
}

bool any_conflict(const std::vector<Cart>& groups) {
  return std::any_of(groups.begin(), groups.end(),
                     [](const Cart& g) { return g.status == Status::conflict; });
}

// Runs the hold script for each group in slot order (a first prepare, or a replay of its first
// answer); with `step`, stops there after each group when a test asks. True when all hold.
bool hold_groups(HoldRunner& runner, std::vector<Cart>& groups, const std::string& step) {
  bool all_held = true;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<Cart> one{groups[g]};
    runner.run(one);
    groups[g] = std::move(one[0]);
    if (!step.empty()) stop_if_asked(fmt::format("{}{}", step, g + 1));
    if (groups[g].status != Status::ok) all_held = false;
  }
  return all_held;
}

// The answer of a cart a short line refused: each line's status, and the lines that were held
// show the stock after they were given back.
void refuse(Cart& cart, const std::vector<Cart>& groups, const Finish& finish) {
  merge_answers(cart, groups);
  for (std::size_t i = 0; i < cart.stock.size() && i < finish.stocks.size(); ++i) {
    if (finish.stocks[i] && cart.line_status[i] == Status::ok) cart.stock[i] = finish.stocks[i];
  }
}

// The attempts of one cart (a new one when reap aborted the last past its deadline).
void run_attempts(Context& ctx, CartKind kind, const HoldOptions& o, Cart& cart,
                  Coordinator& coordinator, HoldRunner& groups_runner) {
  const std::vector<RecordLine> lines = cart_record_lines(cart);
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    CartRecord rec = coordinator.op(
        "intent",
        {kind_name(kind), canon_of(kind, cart), lines_text(cart), std::to_string(o.expire_s * 1000),
         std::to_string(prepare_budget_ms()), std::to_string(o.request_ttl_s)});
    if (!rec.conflict.empty()) {
      return fail(
          cart, Status::conflict,
          fmt::format("id '{}' was already used with other lines or for {}; nothing "
                      "changed",
                      escape_control(cart.id), kind == CartKind::hold ? "an order" : "a hold"));
    }
    stop_if_asked("intent");
    const bool existed = rec.replayed;
    std::vector<Cart> groups = group_carts(ctx.scheme(), cart, rec.attempt);
    if (rec.state == "preparing") {
      const bool all_held = hold_groups(groups_runner, groups, "prepare:");
      rec = coordinator.op("decide", {all_held ? "commit" : "abort", std::to_string(rec.attempt)});
      stop_if_asked("decide");
      if (rec.state == "aborted" && !all_held && !any_conflict(groups)) {
        return refuse(cart, groups, finish_groups(ctx, cart.id, rec, lines, o.request_ttl_s));
      }
    } else if (rec.state != "aborted") {
      // A decided attempt: each group answers its first answer again (a replay changes nothing).
      hold_groups(groups_runner, groups, "");
    }
    finish_groups(ctx, cart.id, rec, lines, o.request_ttl_s);
    if (rec.state == "aborted") continue;  // reaped past its deadline: a new attempt
    merge_answers(cart, groups);
    cart.replayed = existed;
    // A repeat of a hold that is no longer held says what it became, and claims no expiry.
    const bool live = rec.state == "held" || rec.state == "ordered";
    cart.since = existed && !live ? rec.state : "";
    if (kind == CartKind::hold && cart.since.empty()) cart.expires_at_ms = rec.exp;
    return;
  }
  fail(cart, Status::error,
       fmt::format("{} attempts were aborted before every slot group was held (each past its "
                   "deadline); nothing was {}",
                   kAttempts, kind == CartKind::hold ? "held" : "ordered"));
}

}  // namespace

void CartProtocol::run(Cart& cart) {
  Coordinator coordinator(ctx_, cart.id);
  // A hold's groups are held with a life no node reaches; an order's are ordered at once (an
  // abort cancels them), with records kept as long as the cart's own.
  HoldRunner groups_runner(
      ctx_, kind_, o_,
      kind_ == CartKind::hold ? kGroupLifeMs : std::max(o_.expire_s * 1000, prepare_budget_ms()));
  groups_runner.require_acks();
  try {
    run_attempts(ctx_, kind_, o_, cart, coordinator, groups_runner);
  } catch (const NotDurableError&) {
    // A step not acknowledged stops the run, but what the primary decided stands: a hold it
    // made has its expiry, as one Redis answers it.
    if (kind_ == CartKind::hold && made(coordinator.last().state)) {
      cart.expires_at_ms = coordinator.last().exp;
    }
    throw;
  }
}

namespace {

// A replayed or refused settle sends no settle script (the record is finished), so its lines'
// stocks are read: one GET per line, pipelined (as one Redis answers the stock now).
void read_missing_stocks(Context& ctx, const std::vector<RecordLine>& lines,
                         std::vector<std::optional<std::int64_t>>& stocks) {
  std::vector<Call> calls;
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < lines.size() && i < stocks.size(); ++i) {
    if (stocks[i]) continue;
    calls.push_back(Call::read({"GET", lines[i].key}));
    which.push_back(i);
  }
  if (calls.empty()) return;
  std::vector<CallResult> results = ctx.redis().run(calls);
  for (std::size_t k = 0; k < results.size() && k < which.size(); ++k) {
    const CallResult& r = results[k];
    if (r.state != CallResult::State::replied || r.reply.type != Reply::Type::string) continue;
    std::optional<std::int64_t> stock = parse_stored_value(r.reply.str);
    if (stock && *stock >= 0) stocks[which[k]] = stock;
  }
}

}  // namespace

void settle_on_cluster(Context& ctx, const std::string& action, const std::string& id,
                       ExitFold& fold) {
  auto report = [&](Status status, const std::vector<RecordLine>& lines,
                    const std::vector<std::optional<std::int64_t>>& stocks, bool replayed,
                    const std::string& error) {
    print_settle(ctx, action, id, status, lines, stocks, replayed, error, fold);
  };
  if (std::string problem = validate_hold_id(id); !problem.empty()) {
    return report(Status::invalid, {}, {}, false, problem);
  }
  CartRecord rec = Coordinator(ctx, id).op("settle", {action});
  if (rec.state == "missing" || rec.status == "missing") {
    return report(Status::missing, {}, {}, false, "");
  }
  std::optional<std::vector<RecordLine>> lines = record_lines(rec.lines);
  if (!lines) {
    return report(
        Status::error, {}, {}, false,
        fmt::format("{}: the record is not one stockctl wrote", cart_record_key(ctx.scheme(), id)));
  }
  stop_if_asked("decide");
  Finish finish = finish_groups(ctx, id, rec, *lines, kDefaultKeepS);
  read_missing_stocks(ctx, *lines, finish.stocks);
  const Status status = settle_status(rec.status);
  report(status, *lines, finish.stocks, rec.replayed, settle_conflict(action, rec.status));
}

namespace {

/// Due records reap finishes together: each step of the protocol is sent for all of them in one
/// pipeline (the records are independent, and every step is idempotent).
constexpr std::size_t kReapWindow = 512;

/// A due record reap must finish, with what finishing it has done so far.
struct Reaping {
  std::string id;
  CartRecord rec;
  std::string action;
  std::vector<GroupStep> groups;
  std::vector<bool> settle;  ///< per group: has something to settle (not a tombstone)
  std::int64_t units_back = 0;
};

// Step 1: the record decides (a preparing attempt past its deadline aborts, a held hold past
// its expiry expires); the records with a decision left to carry to their groups remain.
std::vector<Reaping> decide_due(Context& ctx, const std::vector<std::string>& ids) {
  std::vector<Call> calls;
  calls.reserve(ids.size());
  for (const std::string& id : ids) calls.push_back(Coordinator(ctx, id).call("reap", {}));
  const std::vector<Reply> replies = durable_run(ctx, calls);
  std::vector<Reaping> work;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    CartRecord rec = Coordinator(ctx, ids[i]).parse(replies[i]);
    std::optional<std::vector<RecordLine>> lines = record_lines(rec.lines);
    const std::string action = finish_action(rec.state);
    if (!lines || rec.finished || action.empty()) continue;
    Reaping r{ids[i], rec, action, group_steps(ctx.scheme(), ids[i], rec.attempt, *lines), {}, 0};
    r.settle.assign(r.groups.size(), true);
    work.push_back(std::move(r));
  }
  return work;
}

// Step 2: before a release, a tombstone on each group; a group never held has nothing to settle.
void tombstone_groups(Context& ctx, std::vector<Reaping>& work) {
  std::vector<Call> calls;
  std::vector<std::pair<std::size_t, std::size_t>> of;
  for (std::size_t w = 0; w < work.size(); ++w) {
    if (!tombstone_first(work[w].rec.state)) continue;
    for (std::size_t g = 0; g < work[w].groups.size(); ++g) {
      calls.push_back(tombstone_call(work[w].groups[g].record, kDefaultKeepS));
      of.emplace_back(w, g);
    }
  }
  const std::vector<Reply> replies = durable_run(ctx, calls);
  for (std::size_t i = 0; i < replies.size(); ++i) {
    Reaping& r = work[of[i].first];
    if (never_held_reply(r.groups[of[i].second].record, replies[i])) r.settle[of[i].second] = false;
  }
}

// Step 3: every group to the decision, then its record kept a while (for replays).
void settle_groups(Context& ctx, std::vector<Reaping>& work) {
  std::vector<Call> calls;
  std::vector<std::pair<std::size_t, std::size_t>> of;
  for (std::size_t w = 0; w < work.size(); ++w) {
    for (std::size_t g = 0; g < work[w].groups.size(); ++g) {
      if (!work[w].settle[g]) continue;
      const GroupStep& step = work[w].groups[g];
      calls.push_back(
          settle_call(ctx, step.record, step.index, work[w].action, step.gid, step.group_lines));
      of.emplace_back(w, g);
    }
  }
  const std::vector<Reply> replies = durable_run(ctx, calls);
  std::vector<Call> keep;
  for (std::size_t i = 0; i < replies.size(); ++i) {
    Reaping& r = work[of[i].first];
    const GroupStep& step = r.groups[of[i].second];
    std::vector<std::optional<std::int64_t>> stocks;
    read_settle(step, gives_back(r.rec.state, r.action), replies[i], stocks, r.units_back);
    keep.push_back(keep_call(step.record, kDefaultKeepS));
  }
  ctx.redis().run(keep);
}

// Step 4: each record marked finished and taken out of its due index.
void mark_done(Context& ctx, const std::vector<Reaping>& work) {
  std::vector<Call> calls;
  calls.reserve(work.size());
  for (const Reaping& r : work) {
    calls.push_back(
        Coordinator(ctx, r.id).call("done", {r.rec.state, std::to_string(r.rec.attempt)}));
  }
  durable_run(ctx, calls);
}

void reap_window(Context& ctx, const std::vector<std::string>& ids, ReapCount& count) {
  std::vector<Reaping> work = decide_due(ctx, ids);
  tombstone_groups(ctx, work);
  settle_groups(ctx, work);
  mark_done(ctx, work);
  for (const Reaping& r : work) {
    if (r.units_back == 0) continue;
    ++count.holds;
    count.units += r.units_back;
  }
}

// The ids due in every slot (at most kReapBatch per slot), and whether a slot had more.
std::vector<std::string> list_due(Context& ctx, bool& more) {
  std::vector<Call> calls;
  calls.reserve(kClusterSlots);
  for (int slot = 0; slot < kClusterSlots; ++slot) {
    Call call = Call::script_call(carts_due_script(), {due_key(ctx.scheme(), slot)},
                                  {std::to_string(kReapBatch)});
    call.idempotent = true;
    calls.push_back(std::move(call));
  }
  more = false;
  std::vector<std::string> ids;
  for (const CallResult& result : ctx.redis().run(calls)) {
    if (result.state != CallResult::State::replied || result.reply.type != Reply::Type::array) {
      throw StockctlError(
          fmt::format("reap: cannot list due holds: {}", result.state == CallResult::State::replied
                                                             ? describe_reply(result.reply)
                                                             : result.error));
    }
    if (result.reply.elements.size() >= static_cast<std::size_t>(kReapBatch)) more = true;
    for (const Reply& id : result.reply.elements) ids.push_back(id.str);
  }
  return ids;
}

}  // namespace

ReapCount reap_on_cluster(Context& ctx) {
  ReapCount count;
  for (bool more = true; more;) {
    const std::vector<std::string> ids = list_due(ctx, more);
    for (std::size_t start = 0; start < ids.size(); start += kReapWindow) {
      const auto from = ids.begin() + static_cast<std::ptrdiff_t>(start);
      const auto to =
          ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), start + kReapWindow));
      reap_window(ctx, std::vector<std::string>(from, to), count);
    }
  }
  return count;
}

}  // namespace stockctl
