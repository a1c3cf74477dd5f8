// Holds and orders on one slot: hold-4002.lua over a cart's lines, with the init lock protocol.

#include "holds/hold_runner.h"

#include <fmt/format.h>

#include <memory>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "base/text.h"
#include "bulk/replica_ack.h"
#include "core/error_reply.h"
#include "core/exit_fold.h"
#include "core/sku.h"
#include "redis/errors.h"
#include "redis/scripts/hold.h"
#include "redis/scripts/settle.h"

namespace stockctl {

HoldRunner::HoldRunner(CartStore& store, CartKind kind, const HoldOptions& o, long long expire_ms)
    : store_(store), kind_(kind), o_(o), expire_ms_(expire_ms), initial_(o.init, store.scheme) {}

void HoldRunner::run(std::vector<Cart>& carts) {
  std::vector<Call> calls;
  std::vector<Cart*> sent;
  for (Cart& cart : carts) {
    if (cart.status != Status::ok) continue;
    calls.push_back(call_for(cart, {}));
    sent.push_back(&cart);
  }
  std::vector<CallResult> results = store_.client.run(calls);
  for (std::size_t i = 0; i < sent.size(); ++i) {
    bool lost = false;
    results[i] = past_lost_log(*sent[i], std::move(results[i]), lost);
    apply(*sent[i], results[i]);
    if (lost && sent[i]->status == Status::ok) sent[i]->replayed = false;
    if (require_acks_) check_acks(*sent[i], results[i]);
    if (sent[i]->status == Status::uninitialized && o_.init.given()) initialize(*sent[i]);
  }
}

Call HoldRunner::call_for(const Cart& cart, const std::vector<std::string>& inits) const {
  HoldRequest request{cart.record_key, cart.index_key,   kind_name(kind_), cart.id,
                      expire_ms_,      o_.request_ttl_s, o_.ttl_s,         {},
                      &store_.log};
  request.lines.reserve(cart.lines.size());
  for (std::size_t i = 0; i < cart.lines.size(); ++i) {
    request.lines.push_back(HoldCallLine{cart.lines[i].sku, cart.keys[i], cart.lines[i].qty,
                                         inits.empty() ? "" : inits[i]});
  }
  return hold_call(request);
}

CallResult HoldRunner::past_lost_log(const Cart& cart, CallResult result, bool& lost) const {
  if (result.state != CallResult::State::replied || !result.reply.is_error()) return result;
  const std::string log_key = lost_log_key(result.reply.str);
  if (log_key.empty()) return result;
  lost = true;
  // The user's id: on a cluster `cart` is one slot group of it, whose id has more after it.
  print_warning(fmt::format("{} {}: {}", kind_name(kind_),
                            quote_value(o_.id.empty() ? cart.id : o_.id),
                            log_lost_warning(log_key)));
  return store_.client.run({call_for(cart, {})})[0];
}

void HoldRunner::apply(Cart& cart, const CallResult& result) const {
  cart.error.clear();
  cart.expires_at_ms.reset();
  if (result.state != CallResult::State::replied) return fail(cart, Status::error, result.error);
  const Reply& r = result.reply;
  if (r.is_error()) return apply_error(cart, r.str);
  const std::size_t n = cart.lines.size();
  const std::optional<HoldAnswer> answer = parse_hold_answer(r, n);
  if (!answer) {
    return fail(cart, Status::error,
                fmt::format("unexpected reply from the hold script: {}", describe_reply(r)));
  }
  cart.replayed = answer->replayed;
  cart.since = answer->since;
  cart.line_status.assign(n, Status::ok);
  cart.stock.assign(n, std::nullopt);
  ExitFold fold;
  for (std::size_t i = 0; i < n; ++i) {
    ItemResult line;
    apply_deduct_answer(line, answer->lines[i].code, answer->lines[i].stock);
    cart.line_status[i] = line.status;
    cart.stock[i] = line.stock;
    fold.add(line.status);
  }
  cart.status = Status::ok;
  // The cart takes the status of its most serious short line (uninitialized before
  // insufficient, as the exit statuses rank them).
  for (std::size_t i = 0; i < n; ++i) {
    if (exit_code_for(cart.line_status[i]) == fold.code() && fold.code() != ExitCode::ok) {
      cart.status = cart.line_status[i];
      break;
    }
  }
  // A short line means nothing was held: only a hold that is held has an expiry.
  if (cart.status == Status::ok && cart.since.empty()) cart.expires_at_ms = answer->expires_at_ms;
}

void HoldRunner::check_acks(Cart& cart, const CallResult& result) const {
  if (cart.status != Status::ok || acknowledged(result, store_.client.options())) return;
  if (!cart.replayed)
    return fail(cart, Status::error, unacknowledged(result, store_.client.options()));
  // A repeat wrote nothing; what is not confirmed is the write of its first answer, which this
  // answer is then not: an error is never a replay.
  cart.replayed = false;
  fail(cart, Status::error,
       fmt::format("id {} was {} before and this repeat changed nothing, but the replicas have "
                   "not confirmed it: {}",
                   quote_value(cart.id), kind_ == CartKind::hold ? "held" : "ordered",
                   unacknowledged(result, store_.client.options())));
}

std::optional<HoldRunner::KeyOfAnotherType> HoldRunner::key_of_another_type(
    const Cart& cart) const {
  // The keys hold-4002.lua meets before it changes anything: each line's stock and holds, and
  // for a hold (an order writes neither) each line's held units and the index of items with
  // holds.
  const bool hold = kind_ == CartKind::hold;
  std::vector<KeyType> keys;
  std::vector<std::size_t> lines;
  for (std::size_t i = 0; i < cart.keys.size(); ++i) {
    const std::string& key = cart.keys[i];
    keys.push_back({key, "", "string", "a stock value"});
    keys.push_back({companion_key(key, kHoldsSuffix), "", "zset", "the item's holds"});
    lines.insert(lines.end(), 2, i);
    if (hold) {
      keys.push_back({companion_key(key, kHeldSuffix), "", "hash", "the item's held units"});
      lines.push_back(i);
    }
  }
  if (hold) {
    keys.push_back({cart.index_key, "", "zset", "the index of items with holds"});
    lines.push_back(cart.keys.size());
  }
  std::vector<Call> calls;
  calls.reserve(keys.size());
  for (const KeyType& k : keys) calls.push_back(Call::read({"TYPE", k.key}));
  const std::vector<CallResult> types = store_.client.run(calls);
  for (std::size_t i = 0; i < types.size(); ++i) {
    const CallResult& type = types[i];
    if (type.state != CallResult::State::replied || type.reply.is_error()) continue;
    if (type.reply.str == "none" || type.reply.str == keys[i].expected) continue;
    keys[i].type = type.reply.str;
    return KeyOfAnotherType{lines[i], std::move(keys[i])};
  }
  return std::nullopt;
}

void HoldRunner::apply_error(Cart& cart, const std::string& text) const {
  if (classify_error_reply(text) == ErrorReply::stockctl_conflict) {
    return fail(
        cart, Status::conflict,
        fmt::format("id {} was already used with other lines or for {}; nothing "
                    "changed",
                    quote_value(cart.id), text.substr(18) == "hold" ? "an order" : "a hold"));
  }
  if (classify_error_reply(text) == ErrorReply::stockctl_log_lost) {
    // Every line was held (or ordered) and the record written; only a log entry is missing.
    // The same id answers the cart again as a replay.
    return fail(cart, Status::error, log_lost_message(lost_log_key(text)));
  }
  ItemResult item;
  item.key = cart.record_key;
  item.op = kind_ == CartKind::hold ? "hold" : "order";
  std::string reply = text;
  // hold-4002.lua names the line whose stored value is corrupt: "STOCKCTL_CORRUPT <i> <value>".
  if (auto corrupt = corrupt_line(text); corrupt && corrupt->index < cart.keys.size()) {
    item.key = cart.keys[corrupt->index];
    item.sku = cart.lines[corrupt->index].sku;
    reply = std::move(corrupt->reply);
  } else if (classify_error_reply(text) == ErrorReply::wrongtype) {
    // The script does not say which key it met: the message names the first key of another
    // type in the order the script reads them (one read each, on this error only), not the
    // hold's record. The script stopped there, before it wrote anything.
    if (std::optional<KeyOfAnotherType> found = key_of_another_type(cart)) {
      if (found->line < cart.keys.size()) {
        item.key = cart.keys[found->line];
        item.sku = cart.lines[found->line].sku;
      }
      const KeyType& k = found->key;
      set_error(item, Status::error,
                fmt::format("{} holds a {}, not {} (a {}; WRONGTYPE); look at it with redis-cli "
                            "TYPE, and remove it if it is not stockctl's",
                            k.key, k.type, k.what, k.expected));
      return fail(cart, item.status,
                  fmt::format("{}; nothing was {}", error_naming_item(item),
                              kind_ == CartKind::hold ? "held" : "ordered"));
    }
  }
  apply_error_reply(item, reply);
  const std::string what = error_naming_item(item);
  fail(cart, item.status,
       fmt::format("{}; nothing was {}", what, kind_ == CartKind::hold ? "held" : "ordered"));
}

// The init lock protocol of deduct, for every line whose key is missing: the locks are taken
// in the lines' order (by SKU, the same in every process, so two carts never wait on each
// other), then the cart is sent again with the initial stock of each line still missing.
void HoldRunner::initialize(Cart& cart) {
  std::vector<std::unique_ptr<LockRelease>> locks;
  std::vector<std::string> inits(cart.lines.size());
  const auto lock_expiry =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(o_.lock.ttl_ms);
  for (std::size_t i = 0; i < cart.lines.size(); ++i) {
    if (cart.line_status[i] != Status::uninitialized) continue;
    const std::string lock_key = companion_key(cart.keys[i], kLockSuffix);
    const std::string token = new_lock_value();
    const std::string& key = cart.keys[i];
    LockWait wait = acquire_lock(store_.client, lock_key, token, o_.lock, [&] {
      return store_.client.call(Call::read({"EXISTS", key})).integer == 1;
    });
    if (wait == LockWait::resolved) continue;
    if (wait == LockWait::timed_out && interrupted()) {
      return fail(cart, Status::error, "not applied: " + interrupt_reason());
    }
    if (wait == LockWait::timed_out) {
      return fail(
          cart, Status::busy,
          fmt::format("init lock still held by another process after {} ms: {}; nothing was {}",
                      o_.lock.wait_ms, describe_held_lock(store_.client, lock_key),
                      kind_ == CartKind::hold ? "held" : "ordered"));
    }
    locks.push_back(std::make_unique<LockRelease>(store_.client, lock_key, token));
    ParsedNumber init =
        initial_.of(cart.lines[i].sku, lock_expiry - std::chrono::milliseconds(200));
    if (!init.ok()) {
      return fail(cart, initial_.failure_status(cart.lines[i].sku),
                  fmt::format("item '{}': {}; nothing was created", cart.lines[i].sku, init.error));
    }
    inits[i] = std::to_string(init.value);
  }
  std::vector<CallResult> results = store_.client.run({call_for(cart, inits)});
  bool lost = false;
  results[0] = past_lost_log(cart, std::move(results[0]), lost);
  apply(cart, results[0]);
  if (lost && cart.status == Status::ok) cart.replayed = false;
  if (require_acks_) check_acks(cart, results[0]);
}

Call record_settle_call(const ChangeLogSettings& log, const std::string& record,
                        const std::string& index, const std::string& action, const std::string& id,
                        const std::vector<RecordLine>& lines) {
  SettleRequest request{record, index, action, id, {}, &log};
  request.stock_keys.reserve(lines.size());
  for (const RecordLine& line : lines) request.stock_keys.push_back(line.key);
  return settle_call(request);
}

}  // namespace stockctl
