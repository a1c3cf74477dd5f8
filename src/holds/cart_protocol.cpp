// The cluster protocol of docs/holds.md for hold and order: intent, prepare per slot group,
// decide, finish.

#include "holds/cart_protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "core/cart_plan.h"
#include "core/exit_fold.h"
#include "holds/group_finish.h"
#include "holds/hold_runner.h"

namespace stockctl {

namespace {

/// A group's holds last this long: no node's clock reaches it, so neither the lazy expiry of
/// the items' scripts nor reap-1.lua ever returns a group's units by itself; the record's
/// decision does.
constexpr long long kGroupLifeMs = 10LL * 365 * 24 * 3600 * 1000;
/// How many attempts a hold or order makes when reap (or its deadline) aborts one.
constexpr int kAttempts = 3;

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

}  // namespace

CartProtocol::CartProtocol(CartStore& store, CartKind kind, const HoldOptions& o,
                           ProtocolHooks hooks)
    : store_(store), kind_(kind), o_(o), hooks_(std::move(hooks)) {}

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
// answer); with `step`, calls the hooks after each group ("prepare:N"). True when all hold.
bool hold_groups(HoldRunner& runner, std::vector<Cart>& groups, const std::string& step,
                 const ProtocolHooks& hooks) {
  bool all_held = true;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<Cart> one{groups[g]};
    runner.run(one);
    groups[g] = std::move(one[0]);
    if (!step.empty()) hooks.after(fmt::format("{}{}", step, g + 1));
    if (groups[g].status != Status::ok) all_held = false;
  }
  return all_held;
}

// The answer of a cart a short line refused: each line's status, and the lines that were held
// show the stock after they were given back.
void refuse(Cart& cart, const std::vector<Cart>& groups, const Finish& finish) {
  merge_answers(cart, groups);
  // A group that got no answer (or one its replicas did not confirm, or a corrupt value) failed
  // the attempt; it was aborted and every group given back, so nothing of the cart stands.
  if (cart.status == Status::error) {
    cart.error = fmt::format("not applied: {} (the attempt was aborted and nothing is held)",
                             without_outcome(cart.error));
  }
  for (std::size_t i = 0; i < cart.stock.size() && i < finish.stocks.size(); ++i) {
    if (finish.stocks[i] && cart.line_status[i] == Status::ok) cart.stock[i] = finish.stocks[i];
  }
}

}  // namespace

// The attempts of one cart (a new one when reap aborted the last past its deadline).
void CartProtocol::run_attempts(Cart& cart, Coordinator& coordinator, HoldRunner& groups_runner) {
  const CartKind kind = kind_;
  const HoldOptions& o = o_;
  const std::vector<RecordLine> lines = cart_record_lines(cart);
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    CartRecord rec = coordinator.op(
        "intent",
        {kind_name(kind), canon_of(kind, cart), lines_text(cart), std::to_string(o.expire_s * 1000),
         std::to_string(hooks_.prepare_budget_ms), std::to_string(o.request_ttl_s)});
    if (!rec.conflict.empty()) {
      return fail(
          cart, Status::conflict,
          fmt::format("id {} was already used with other lines or for {}; nothing "
                      "changed",
                      quote_value(cart.id), kind == CartKind::hold ? "an order" : "a hold"));
    }
    hooks_.after("intent");
    const bool existed = rec.replayed;
    std::vector<Cart> groups = group_carts(store_.scheme, cart, rec.attempt);
    if (rec.state == CartState::preparing) {
      const bool all_held = hold_groups(groups_runner, groups, "prepare:", hooks_);
      rec = coordinator.op("decide", {all_held ? "commit" : "abort", std::to_string(rec.attempt)});
      hooks_.after("decide");
      if (rec.state == CartState::aborted && !all_held && !any_conflict(groups)) {
        return refuse(cart, groups,
                      finish_groups(store_, cart.id, rec, lines, o.request_ttl_s, hooks_));
      }
    } else if (rec.state != CartState::aborted) {
      // A decided attempt: each group answers its first answer again (a replay changes nothing).
      hold_groups(groups_runner, groups, "", hooks_);
    }
    finish_groups(store_, cart.id, rec, lines, o.request_ttl_s, hooks_);
    if (rec.state == CartState::aborted) continue;  // reaped past its deadline: a new attempt
    merge_answers(cart, groups);
    cart.replayed = existed;
    // A repeat of a hold that is no longer held says what it became, and claims no expiry.
    cart.since = existed && !cart_live(rec.state) ? cart_state_name(rec.state) : "";
    if (kind == CartKind::hold && cart.since.empty()) cart.expires_at_ms = rec.exp;
    return;
  }
  fail(cart, Status::error,
       fmt::format("{} attempts were aborted before every slot group was held (each past its "
                   "deadline); nothing was {}",
                   kAttempts, kind == CartKind::hold ? "held" : "ordered"));
}

void CartProtocol::run(Cart& cart) {
  Coordinator coordinator(store_, cart.id);
  // A hold's groups are held with a life no node reaches; an order's are ordered at once (an
  // abort cancels them), with records kept as long as the cart's own.
  HoldRunner groups_runner(store_, kind_, o_,
                           kind_ == CartKind::hold
                               ? kGroupLifeMs
                               : std::max(o_.expire_s * 1000, hooks_.prepare_budget_ms));
  groups_runner.require_acks();
  try {
    run_attempts(cart, coordinator, groups_runner);
  } catch (const NotDurableError&) {
    keep_expiry_if_made(cart, coordinator);
    throw;
  } catch (const StepCutOff& e) {
    cut_off(cart, coordinator, e.maybe_applied() || coordinator.may_have_written(), e.reason());
  } catch (const StockctlError& e) {
    // A reply the protocol cannot read: whatever this cart's steps did so far stands.
    cut_off(cart, coordinator, coordinator.may_have_written(), e.what());
  }
}

void CartProtocol::keep_expiry_if_made(Cart& cart, const Coordinator& coordinator) const {
  // What the primary decided stands: a hold it made has its expiry, as one Redis answers it.
  if (kind_ == CartKind::hold && cart_made(coordinator.last().state)) {
    cart.expires_at_ms = coordinator.last().exp;
  }
}

void CartProtocol::cut_off(Cart& cart, const Coordinator& coordinator, bool maybe_applied,
                           const std::string& why) const {
  // No line claims a status: the cart's answer is this error.
  cart.line_status.clear();
  cart.stock.clear();
  cart.replayed = false;
  cart.since.clear();
  cart.expires_at_ms.reset();
  if (!maybe_applied) return fail(cart, Status::error, "not applied: " + why);
  keep_expiry_if_made(cart, coordinator);
  fail(cart, Status::error,
       fmt::format("outcome unknown: {}; running the same command again with the same id "
                   "finishes it (or reap does)",
                   why));
}

}  // namespace stockctl
