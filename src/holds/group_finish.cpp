// Finishing a cluster record's decision: every slot group of it confirmed, released or
// cancelled once, whoever finishes (the run itself, a re-run, reap).

#include "holds/group_finish.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/diagnostics.h"
#include "base/text.h"
#include "core/quantity.h"
#include "holds/hold_runner.h"
#include "redis/errors.h"
#include "redis/scripts/cart.h"
#include "redis/scripts/settle.h"

namespace stockctl {
namespace {

/// The canon of a group an aborted attempt never held: a late prepare of it is refused.
constexpr const char* kTombstone = "!aborted";

bool never_held(Client& client, const std::string& record, long long keep_s) {
  return never_held_reply(record, durable_call(client, group_tombstone_call(record, keep_s)));
}

}  // namespace

// Before an aborted or expired attempt's group is released: writes a tombstone where the group
// has no record, so that a prepare of it still in flight is refused.
Call group_tombstone_call(const std::string& record, long long keep_s) {
  return tombstone_call(record, kTombstone, keep_s);
}

bool never_held_reply(const std::string& record, const Reply& r) {
  const std::optional<bool> never = parse_never_held(r);
  if (!never) {
    throw StockctlError(fmt::format("{}: unexpected reply from the tombstone script: {}", record,
                                    describe_reply(r)));
  }
  return *never;
}

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
                 std::vector<std::optional<std::int64_t>>& stocks, std::int64_t& units_back,
                 std::vector<std::size_t>* nowhere) {
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
  if (r.is_error() && r.error_kind() == ErrorReply::stockctl_log_lost) {
    // The group was settled whole; only a change log entry is missing. Its answer (the stocks)
    // is what a run of the same command reads again, as a replay.
    throw StockctlError(fmt::format("{}: {} (run the same command again to finish)", step.record,
                                    log_lost_message(lost_log_key(r.str))));
  }
  const std::optional<SettleReply> settled = parse_settle_reply(r);
  if (!settled) {
    throw StockctlError(fmt::format("{}: unexpected reply from the settle script: {}", step.record,
                                    describe_reply(r)));
  }
  if (settled->status == "removed" && settled->removed_line < step.group_lines.size()) {
    // The record decided the confirm already: this group could not follow it, and says why.
    print_warning(fmt::format("{}: {}", step.record,
                              removed_line_error(step.group_lines[settled->removed_line])));
  }
  const bool applied = settled->status == "ok" && !settled->replayed;
  for (std::size_t k = 0; k < step.lines.size() && k < settled->stocks.size(); ++k) {
    const std::int64_t stock = settled->stocks[k];
    if (stock >= 0 && step.lines[k] < stocks.size()) stocks[step.lines[k]] = stock;
    if (applied && back) units_back += step.group_lines[k].qty;
    if (applied && nowhere && stock == kStockMissing) nowhere->push_back(step.lines[k]);
  }
}

Call keep_call(const std::string& record, long long keep_s) {
  return Call::idempotent_write({"EXPIRE", record, std::to_string(std::max(keep_s, 60LL))});
}

// Drives every group of the record to its state, each step idempotent: a group is confirmed,
// released or cancelled once whoever finishes (this run, a re-run, reap). Before releasing, a
// group that was never held gets a tombstone, so that a prepare of this attempt still in flight
// (a paused process) is refused instead of holding units nobody would give back.
Finish finish_groups(CartStore& store, const std::string& id, const CartRecord& rec,
                     const std::vector<RecordLine>& lines, long long keep_s,
                     const ProtocolHooks& hooks) {
  Finish finish;
  finish.stocks.assign(lines.size(), std::nullopt);
  // What the decision asks of each group: core/cart_states.h, the table of record states.
  const GroupFinish todo = group_finish(rec.state);
  if (todo.action == GroupAction::none || rec.finished) return finish;
  const std::string action = group_action_name(todo.action);
  const std::vector<GroupStep> steps = group_steps(store.scheme, id, rec.attempt, lines);
  for (std::size_t g = 0; g < steps.size(); ++g) {
    const GroupStep& step = steps[g];
    if (todo.tombstone_first && never_held(store.client, step.record, keep_s)) {
      hooks.after(fmt::format("finish:{}", g + 1));
      continue;
    }
    Reply r = durable_call(store.client, record_settle_call(store.log, step.record, step.index,
                                                            action, step.gid, step.group_lines));
    if (r.is_error() && r.error_kind() == ErrorReply::stockctl_log_lost) {
      // The group was settled whole; only a change log entry is missing (another program's
      // value where the log is). Its answer is not read again: a repeat would answer as the
      // group's record says now (a confirm whose group had to be released answers "released"
      // the second time, with nothing said of the line). The other groups are finished as
      // usual, and the settle's answer says it was applied, but not logged.
      if (finish.lost_log.empty()) finish.lost_log = lost_log_key(r.str);
      print_warning(
          fmt::format("{} {}: {}", action, quote_value(id), log_lost_warning(lost_log_key(r.str))));
    } else {
      // Release and cancel give units back to stock (cancel the units an order or a confirm
      // sold).
      read_settle(step, todo.gives_back, r, finish.stocks, finish.units_back,
                  todo.action == GroupAction::confirm ? nullptr : &finish.nowhere);
    }
    store.client.call(keep_call(step.record, keep_s));
    hooks.after(fmt::format("finish:{}", g + 1));
  }
  Coordinator(store, id).op("done", {cart_state_name(rec.state), std::to_string(rec.attempt)});
  return finish;
}

// A replayed or refused settle sends no settle script (the record is finished), so its lines'
// stocks are read: one GET per line, pipelined (as one Redis answers the stock now).
void read_missing_stocks(Client& client, const std::vector<RecordLine>& lines,
                         std::vector<std::optional<std::int64_t>>& stocks) {
  std::vector<Call> calls;
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < lines.size() && i < stocks.size(); ++i) {
    if (stocks[i]) continue;
    calls.push_back(Call::read({"GET", lines[i].key}));
    which.push_back(i);
  }
  if (calls.empty()) return;
  std::vector<CallResult> results = client.run(calls);
  for (std::size_t k = 0; k < results.size() && k < which.size(); ++k) {
    const CallResult& r = results[k];
    if (r.state != CallResult::State::replied || r.reply.type != Reply::Type::string) continue;
    std::optional<std::int64_t> stock = parse_stored_value(r.reply.str);
    if (stock && *stock >= 0) stocks[which[k]] = stock;
  }
}

}  // namespace stockctl
