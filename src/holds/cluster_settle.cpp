// confirm, release and cancel on a cluster (the record decides, then every group is finished),
// and reap there (every due record decided and finished, a window of records at a time).

#include "holds/cluster_settle.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/cart_keys.h"
#include "core/hash_slot.h"
#include "core/hold_lines.h"
#include "core/outcome.h"
#include "core/quantity.h"
#include "core/split_layout.h"
#include "core/split_plan.h"
#include "holds/cart_record.h"
#include "holds/group_finish.h"
#include "holds/hold_runner.h"
#include "holds/settle_answer.h"
#include "redis/errors.h"
#include "redis/scripts/cart.h"

namespace stockctl {

namespace {

Settled settled_answer(Status status, std::vector<RecordLine> lines,
                       std::vector<std::optional<std::int64_t>> stocks, bool replayed,
                       std::string error) {
  return Settled{status, std::move(lines), std::move(stocks), replayed, std::move(error), {}};
}

// The answer of a settle cut off by a step without an answer (or a reply it cannot read):
// "not applied" while nothing of it can have been written, else "outcome unknown".
Settled settle_cut_off(const Coordinator& coordinator, bool maybe_applied, const std::string& why) {
  if (!maybe_applied && !coordinator.may_have_written()) {
    return settled_answer(Status::error, {}, {}, false, "not applied: " + why);
  }
  return settled_answer(
      Status::error, {}, {}, false,
      fmt::format("outcome unknown: {}; running the same command again with the same "
                  "id finishes it (or reap does)",
                  why));
}

// The record decides (settle), then every group is driven to the decision.
Settled settle_decided(CartStore& store, const std::string& action, const std::string& id,
                       Coordinator& coordinator, const ProtocolHooks& hooks);

// The lines of cart record `raw` ("<state> <attempt> <exp> <deadline> <finished> <kind> <size>\n"
// then <size> bytes of lines, as lua/cart-2.lua keeps it); nullopt when it reads otherwise.
std::optional<std::vector<RecordLine>> raw_record_lines(const std::string& raw) {
  const std::size_t end = raw.find('\n');
  const std::size_t space = raw.rfind(' ', end);
  if (end == std::string::npos || space == std::string::npos) return std::nullopt;
  const std::optional<std::int64_t> size =
      parse_stored_value(raw.substr(space + 1, end - space - 1));
  if (!size || static_cast<std::size_t>(*size) > raw.size() - end - 1) return std::nullopt;
  return record_lines(raw.substr(end + 1, static_cast<std::size_t>(*size)));
}

// A cancel or release gives units back to every line's item, which a split item cannot take
// yet; the record's decision could not be taken back, so a line on a split item refuses a
// settle that would give units back before it decides anything (one Redis's settle script
// refuses those before it writes).
// An item split between this read and the decision is still left to a run after its merge.
std::optional<Settled> refuse_split_lines(CartStore& store, const std::string& action,
                                          const std::string& id) {
  if (action == "confirm") return std::nullopt;
  const Reply raw = store.client.call(Call::read({"GET", cart_record_key(store.scheme, id)}));
  if (raw.type != Reply::Type::string) return std::nullopt;  // the decision says what it is
  // Only a settle that gives units back is refused: a replay, an expired hold, a conflict
  // answer as the record says, as one Redis's settle script answers them.
  const std::string state = raw.str.substr(0, raw.str.find(' '));
  const bool gives_back =
      state == "held" || (action == "cancel" && (state == "ordered" || state == "confirmed"));
  if (!gives_back) return std::nullopt;
  const std::optional<std::vector<RecordLine>> lines = raw_record_lines(raw.str);
  if (!lines) return std::nullopt;
  std::vector<Call> calls;
  calls.reserve(lines->size());
  for (const RecordLine& line : *lines) calls.push_back(Call::read({"GET", line.key}));
  const std::vector<CallResult> values = store.client.run(calls);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const CallResult& v = values[i];
    if (v.state == CallResult::State::replied && v.reply.type == Reply::Type::string &&
        is_split_record(v.reply.str)) {
      // Each line's stock now, as a refused answer gives it (the split item's stays null).
      std::vector<std::optional<std::int64_t>> stocks(lines->size());
      read_missing_stocks(store.client, *lines, stocks);
      return settled_answer(
          Status::error, *lines, std::move(stocks), false,
          split_item_refused(action, (*lines)[i].sku, v.reply.str) + "; nothing changed");
    }
  }
  return std::nullopt;
}

}  // namespace

Settled settle_on_cluster(CartStore& store, const std::string& action, const std::string& id,
                          const ProtocolHooks& hooks) {
  if (std::string problem = validate_hold_id(id); !problem.empty()) {
    return settled_answer(Status::invalid, {}, {}, false, problem);
  }
  Coordinator coordinator(store, id);
  try {
    return settle_decided(store, action, id, coordinator, hooks);
  } catch (const NotDurableError&) {
    throw;
  } catch (const StepCutOff& e) {
    return settle_cut_off(coordinator, e.maybe_applied(), e.reason());
  } catch (const StockctlError& e) {
    return settle_cut_off(coordinator, false, e.what());
  }
}

namespace {

Settled settle_decided(CartStore& store, const std::string& action, const std::string& id,
                       Coordinator& coordinator, const ProtocolHooks& hooks) {
  if (std::optional<Settled> refused = refuse_split_lines(store, action, id)) return *refused;
  CartRecord rec = coordinator.op("settle", {action});
  if (rec.state == CartState::missing || rec.status == "missing") {
    return settled_answer(Status::missing, {}, {}, false, "");
  }
  std::optional<std::vector<RecordLine>> lines = record_lines(rec.lines);
  if (!lines) {
    return settled_answer(
        Status::error, {}, {}, false,
        fmt::format("{}: the record is not one stockctl wrote", cart_record_key(store.scheme, id)));
  }
  hooks.after("decide");
  Finish finish = finish_groups(store, id, rec, *lines, kDefaultKeepS, hooks);
  read_missing_stocks(store.client, *lines, finish.stocks);
  const Status status = settle_status(rec.status);
  Settled answer = settled_answer(status, *lines, finish.stocks, rec.replayed,
                                  settle_conflict(action, rec.status));
  answer.nowhere = std::move(finish.nowhere);
  if (!finish.lost_log.empty()) {
    // As on one Redis: applied, and the same command answers it again (as a replay).
    answer.status = Status::error;
    answer.error = log_lost_message(finish.lost_log);
  }
  return answer;
}

/// Due records reap finishes together: each step of the protocol is sent for all of them in one
/// pipeline (the records are independent, and every step is idempotent).
constexpr std::size_t kReapWindow = 512;

/// A due record reap must finish, with what finishing it has done so far.
struct Reaping {
  std::string id;
  CartRecord rec;
  GroupFinish todo;
  std::vector<GroupStep> groups;
  std::vector<bool> settle;  ///< per group: has something to settle (not a tombstone)
  std::int64_t units_back = 0;
  std::vector<RecordLine> nowhere;  ///< lines given back while their stock key was missing
  std::string unfinished;           ///< why a group could not be settled ("" when all were)
};

// Step 1: the record decides (a preparing attempt past its deadline aborts, a held hold past
// its expiry expires); the records with a decision left to carry to their groups remain.
std::vector<Reaping> decide_due(CartStore& store, const std::vector<std::string>& ids) {
  std::vector<Call> calls;
  calls.reserve(ids.size());
  for (const std::string& id : ids) calls.push_back(Coordinator(store, id).call("reap", {}));
  const std::vector<Reply> replies = durable_run(store.client, calls);
  std::vector<Reaping> work;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    CartRecord rec = Coordinator(store, ids[i]).parse(replies[i]);
    std::optional<std::vector<RecordLine>> lines = record_lines(rec.lines);
    const GroupFinish todo = group_finish(rec.state);
    if (!lines || rec.finished || todo.action == GroupAction::none) continue;
    Reaping r{ids[i], rec, todo, group_steps(store.scheme, ids[i], rec.attempt, *lines),
              {},     0,   {},   {}};
    r.settle.assign(r.groups.size(), true);
    work.push_back(std::move(r));
  }
  return work;
}

// Step 2: before a release, a tombstone on each group; a group never held has nothing to settle.
void tombstone_groups(CartStore& store, std::vector<Reaping>& work) {
  std::vector<Call> calls;
  std::vector<std::pair<std::size_t, std::size_t>> of;
  for (std::size_t w = 0; w < work.size(); ++w) {
    if (!work[w].todo.tombstone_first) continue;
    for (std::size_t g = 0; g < work[w].groups.size(); ++g) {
      calls.push_back(group_tombstone_call(work[w].groups[g].record, kDefaultKeepS));
      of.emplace_back(w, g);
    }
  }
  const std::vector<Reply> replies = durable_run(store.client, calls);
  for (std::size_t i = 0; i < replies.size(); ++i) {
    Reaping& r = work[of[i].first];
    if (never_held_reply(r.groups[of[i].second].record, replies[i])) r.settle[of[i].second] = false;
  }
}

// Step 3: every group to the decision, then its record kept a while (for replays).
void settle_groups(CartStore& store, std::vector<Reaping>& work) {
  std::vector<Call> calls;
  std::vector<std::pair<std::size_t, std::size_t>> of;
  for (std::size_t w = 0; w < work.size(); ++w) {
    for (std::size_t g = 0; g < work[w].groups.size(); ++g) {
      if (!work[w].settle[g]) continue;
      const GroupStep& step = work[w].groups[g];
      calls.push_back(record_settle_call(store.log, step.record, step.index,
                                         group_action_name(work[w].todo.action), step.gid,
                                         step.group_lines));
      of.emplace_back(w, g);
    }
  }
  const std::vector<Reply> replies = durable_run(store.client, calls);
  std::vector<Call> keep;
  for (std::size_t i = 0; i < replies.size(); ++i) {
    Reaping& r = work[of[i].first];
    const GroupStep& step = r.groups[of[i].second];
    std::vector<std::optional<std::int64_t>> stocks;
    std::vector<std::size_t> nowhere;
    try {
      read_settle(step, r.todo.gives_back, replies[i], stocks, r.units_back,
                  r.todo.gives_back ? &nowhere : nullptr);
    } catch (const StockctlError& e) {
      // A corrupt or split item: this record stays due with its decision, and the others
      // of the window are finished all the same.
      if (r.unfinished.empty()) r.unfinished = e.what();
      continue;
    }
    for (std::size_t line : nowhere) {
      for (std::size_t k = 0; k < step.lines.size(); ++k) {
        if (step.lines[k] == line) r.nowhere.push_back(step.group_lines[k]);
      }
    }
    keep.push_back(keep_call(step.record, kDefaultKeepS));
  }
  store.client.run(keep);
}

// Step 4: each record marked finished and taken out of its due index.
void mark_done(CartStore& store, const std::vector<Reaping>& work) {
  std::vector<Call> calls;
  calls.reserve(work.size());
  for (const Reaping& r : work) {
    if (!r.unfinished.empty()) continue;
    calls.push_back(
        Coordinator(store, r.id)
            .call("done", {cart_state_name(r.rec.state), std::to_string(r.rec.attempt)}));
  }
  if (!calls.empty()) durable_run(store.client, calls);
}

// A record whose groups could not be finished is looked at again a minute later: its due score
// goes a minute on (relative to itself, so no clock is read), so that the records behind it in
// its slot's index are reached, and this run does not list it again and again.
void put_off(CartStore& store, const std::vector<Reaping>& work) {
  std::vector<Call> calls;
  for (const Reaping& r : work) {
    if (r.unfinished.empty()) continue;
    const std::string due = due_key(store.scheme, key_slot(cart_record_key(store.scheme, r.id)));
    calls.push_back(Call::idempotent_write({"ZADD", due, "XX", "INCR", "60000", r.id}));
  }
  if (!calls.empty()) store.client.run(calls);
}

void reap_window(CartStore& store, const std::vector<std::string>& ids, Reaped& count) {
  std::vector<Reaping> work = decide_due(store, ids);
  tombstone_groups(store, work);
  settle_groups(store, work);
  mark_done(store, work);
  put_off(store, work);
  for (const Reaping& r : work) {
    if (!r.unfinished.empty()) count.unfinished.push_back(r.unfinished);
    if (r.units_back == 0) continue;
    ++count.holds;
    count.units += r.units_back;
    for (const RecordLine& line : r.nowhere) {
      count.units -= line.qty;
      count.nowhere.push_back(line);
    }
  }
}

// The ids due in every slot (at most kReapBatch per slot), and whether a slot had more.
std::vector<std::string> list_due(CartStore& store, bool& more) {
  std::vector<Call> calls;
  calls.reserve(kClusterSlots);
  for (int slot = 0; slot < kClusterSlots; ++slot) {
    calls.push_back(carts_due_call(due_key(store.scheme, slot), kReapBatch));
  }
  more = false;
  std::vector<std::string> ids;
  for (const CallResult& result : store.client.run(calls)) {
    const std::optional<std::vector<std::string>> due =
        result.state == CallResult::State::replied ? parse_carts_due(result.reply) : std::nullopt;
    if (!due) {
      throw StockctlError(
          fmt::format("reap: cannot list due holds: {}", result.state == CallResult::State::replied
                                                             ? describe_reply(result.reply)
                                                             : result.error));
    }
    if (due->size() >= static_cast<std::size_t>(kReapBatch)) more = true;
    ids.insert(ids.end(), due->begin(), due->end());
  }
  return ids;
}

}  // namespace

Reaped reap_on_cluster(CartStore& store) {
  Reaped count;
  for (bool more = true; more;) {
    const std::vector<std::string> ids = list_due(store, more);
    for (std::size_t start = 0; start < ids.size(); start += kReapWindow) {
      const auto from = ids.begin() + static_cast<std::ptrdiff_t>(start);
      const auto to =
          ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), start + kReapWindow));
      reap_window(store, std::vector<std::string>(from, to), count);
    }
  }
  return count;
}

}  // namespace stockctl