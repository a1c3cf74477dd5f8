#include "bulk/store_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <map>
#include <optional>

#include "base/backoff.h"
#include "base/diagnostics.h"
#include "base/interrupt.h"
#include "base/text.h"
#include "bulk/replica_ack.h"
#include "bulk/split_runner.h"
#include "core/cart_keys.h"
#include "core/hash_slot.h"
#include "core/hold_lines.h"
#include "core/sku.h"
#include "core/split_plan.h"
#include "lock/init_lock.h"
#include "redis/errors.h"
#include "redis/scripts/put.h"

namespace stockctl {

namespace {

// True when an EXISTS answered 0 (a call that failed says nothing, so it is not).
bool is_zero(const CallResult& result) {
  return result.state == CallResult::State::replied && result.reply.type == Reply::Type::integer &&
         result.reply.integer == 0;
}

// TIME's answer (seconds, microseconds) in ms, or nullopt.
std::optional<std::int64_t> time_reply_ms(const Reply& reply) {
  if (reply.type != Reply::Type::array || reply.elements.size() != 2) return std::nullopt;
  std::int64_t parts[2] = {0, 0};
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string& text = reply.elements[i].str;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parts[i]);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  }
  return parts[0] * 1000 + parts[1] / 1000;
}

}  // namespace

void PutRunner::start(std::vector<PutItem>& items) {
  Window& added = windows_.open();
  added.items = &items;
  std::vector<PutItem*> pending;
  for (PutItem& item : items) {
    if (item.pending) pending.push_back(&item);
  }
  // A dry run only reads: SET NX would write, so init's dry run starts with GET as rebuild's does.
  // So does a forced write: the GET finds a split item's layout record, which the put script
  // would replace, leaving the units in its buckets behind (docs/split.md).
  begin(added, mode_.rebuild || mode_.dry_run || mode_.force ? Step::get : Step::set,
        std::move(pending));
}

void PutRunner::finish([[maybe_unused]] std::vector<PutItem>& items) {
  // Windows finish in the order they started; steps of later windows that went out before this
  // one's next steps are read on the way.
  assert(windows_.oldest().items == &items);
  while (!windows_.oldest().written) complete_oldest_step();
  settle_split_items();
  split_written(items);
  windows_.take_oldest();
}

void PutRunner::run(std::vector<PutItem>& items) {
  start(items);
  finish(items);
}

void PutRunner::begin(Window& window, Step step, std::vector<PutItem*> items) {
  if (items.empty()) {
    window.written = true;
    return;
  }
  // SET cannot append to the change log in the same step, give back expired holds before it
  // overwrites a value, nor leave the units of live holds out of one; the put script can. (The
  // rows of a source all have the columns of its header: all count held units or none do.)
  const bool counts_held = std::any_of(items.begin(), items.end(),
                                       [](const PutItem* item) { return item->counts_held; });
  // A stock key lost while its item had holds (expired, evicted) leaves the holds behind: SET
  // NX, MSETNX and the load script would create the key without looking at them, and their
  // units would come back on top of the value loaded at the next touch (or reap). The put
  // script settles them first: expired ones go with the lost key, live ones count as held.
  const bool holds = step == Step::set && may_have_holds(items);
  if (step == Step::set && (log_.enabled || mode_.force || counts_held || holds)) {
    // Where SET NX would do but for the log, MSETNX or the load script writes the entry too.
    if (log_.enabled && !mode_.force && !counts_held && !mode_.dry_run && !holds) {
      begin_load(window, items);
      return;
    }
    step = Step::script;
  }
  std::vector<Call> calls;
  calls.reserve(items.size() * 2);
  for (const PutItem* item : items) {
    if (step == Step::get && reads_holds()) calls.push_back(holds_call(*item));
    calls.push_back(call_for(step, *item));
  }
  client_.start(std::move(calls));
  window.step = step;
  window.sent = std::move(items);
  wire_.push_back(&window);
}

void PutRunner::complete_oldest_step() {
  Window& window = *wire_.front();
  wire_.pop_front();
  std::vector<CallResult> results = client_.finish();
  std::vector<PutItem*> sent = std::move(window.sent);
  switch (window.step) {
    case Step::set:
      // SET NX said nothing about keys that existed: GET tells their value.
      begin(window, Step::get, apply_set(sent, results));
      return;
    case Step::mset:
      // A call that found any of its keys set nothing: the load script sorts its rows out.
      begin_load_script(window, call_groups(apply_mset(window, sent, results)));
      return;
    case Step::load:
      // Keys that exist go on to the put script, as every logged write did before the load
      // script: it gives their expired holds back and reports them.
      begin(window, Step::script, apply_load(window, sent, results));
      return;
    case Step::get:
      begin(window, Step::script, apply_get(sent, results));
      return;
    case Step::script:
      break;
  }
  std::vector<PutItem*> locked;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    apply_script(*sent[i], results[i]);
    if (sent[i]->result.status == Status::busy) locked.push_back(sent[i]);
  }
  if (!locked.empty()) wait_for_lock_holders(locked);
  window.written = true;
}

// Rows per call of the load script: enough that the call's own cost is small beside the rows',
// few enough that one call holds the server for well under a millisecond.
constexpr std::size_t kLoadBatch = 128;

void PutRunner::begin_load(Window& window, std::vector<PutItem*> items) {
  // A fresh load's stock keys and first entries go in plain MSETNX calls: the key and its entry
  // are still written together or not at all, by one command, and the server's cost per row is
  // a SET NX's for each of the two keys, where the load script costs half as much again
  // (docs/benchmarks.md, "The change log's load"). The entries' time is the clock of the server
  // that takes them, read once. For keys with an expiry, which MSETNX cannot give, the script
  // writes them; so it does for a few rows before the clocks are read (one item's init), where
  // TIME would be a round trip more.
  constexpr std::size_t kRowsWorthTheClock = 32;
  const std::map<int, std::vector<PutItem*>> groups = call_groups(items);
  if (ttl_s_ == 0 && (clocks_read_ || items.size() >= kRowsWorthTheClock) &&
      begin_mset(window, groups)) {
    return;
  }
  begin_load_script(window, groups);
}

std::map<int, std::vector<PutItem*>> PutRunner::call_groups(const std::vector<PutItem*>& items) {
  // A standalone server takes any keys in one call; a cluster only the keys of one slot.
  const bool cluster = is_cluster();
  std::map<int, std::vector<PutItem*>> groups;
  for (PutItem* item : items) groups[cluster ? key_slot(item->result.key) : 0].push_back(item);
  return groups;
}

bool PutRunner::begin_mset(Window& window, const std::map<int, std::vector<PutItem*>>& groups) {
  std::vector<Call> calls;
  std::vector<PutItem*> sent;
  std::vector<std::size_t> batches;
  for (const auto& [slot, group] : groups) {
    const std::optional<std::int64_t> now = server_now_ms(slot);
    if (!now) return false;
    const LoadEntryPacker packer(*now, change_, log_);
    for (std::size_t at = 0; at < group.size(); at += kLoadBatch) {
      const std::size_t end = std::min(group.size(), at + kLoadBatch);
      std::vector<std::string> args;
      args.reserve(1 + 4 * (end - at));
      args.emplace_back("MSETNX");
      for (std::size_t i = at; i < end; ++i) {
        const PutItem& item = *group[i];
        args.push_back(item.result.key);
        args.push_back(std::to_string(item.value));
        args.push_back(first_log_key(item.result.key));
        args.push_back(packer.entry(item.value));
        sent.push_back(group[i]);
      }
      calls.push_back(Call::idempotent_write(std::move(args)));
      batches.push_back(end - at);
    }
  }
  window.sent = std::move(sent);
  window.batches = std::move(batches);
  client_.start(std::move(calls));
  window.step = Step::mset;
  wire_.push_back(&window);
  return true;
}

// Like apply_set, with one reply for each call's rows (window.batches), which `created` reads
// for each row (its place and the call's row count): 1 the row's key was created, 0 it was there,
// nullopt an unexpected reply, which `unexpected` describes.
template <typename Created>
std::vector<PutItem*> PutRunner::apply_batches(const Window& window,
                                               const std::vector<PutItem*>& sent,
                                               const std::vector<CallResult>& results,
                                               Created created,
                                               std::string (*unexpected)(const Reply&)) const {
  std::vector<PutItem*> next;
  std::size_t first = 0;
  for (std::size_t b = 0; b < window.batches.size(); ++b) {
    const CallResult& result = results[b];
    for (std::size_t i = 0; i < window.batches[b]; ++i) {
      PutItem& item = *sent[first + i];
      ItemResult& r = item.result;
      std::optional<long long> answer;
      if (result.state != CallResult::State::replied) {
        set_error(r, Status::error, result.error);
      } else if (result.reply.is_error()) {
        apply_error_reply(r, result.reply.str);
      } else if (!(answer = created(result.reply, i, window.batches[b]))) {
        set_error(r, Status::error, unexpected(result.reply));
      } else if (*answer == 0) {
        // The key exists: nothing was written. Found on a retry after a try whose answer was
        // lost (this call's, or the MSETNX's before the load script), it may be that try's
        // own write, which the next step says.
        item.after_unknown = item.after_unknown || result.after_unknown;
        next.push_back(&item);
      } else {
        apply_put_verdict(r, "created", std::nullopt, item.value, mode_);
        if (is_written(r.status)) check_durability(r, result, client_.options());
      }
    }
    first += window.batches[b];
  }
  return next;
}

std::vector<PutItem*> PutRunner::apply_mset(const Window& window, const std::vector<PutItem*>& sent,
                                            const std::vector<CallResult>& results) const {
  // One integer for the call's rows: 1 all were set, 0 none was (a key was there).
  return apply_batches(
      window, sent, results,
      [](const Reply& reply, std::size_t /*row*/, std::size_t /*rows*/) {
        return reply.type == Reply::Type::integer ? std::optional<long long>(reply.integer)
                                                  : std::nullopt;
      },
      [](const Reply& reply) {
        return fmt::format("unexpected reply to MSETNX: {}", describe_reply(reply));
      });
}

void PutRunner::read_clocks() {
  clocks_read_ = true;
  // Whatever cannot be read leaves its rows to the load script, which reads the clock itself
  // and reports what the connection does: a node that cannot be reached is asked once.
  // The node names are the client's own (slot_owner names them the same way).
  std::vector<std::string> nodes;
  try {
    nodes = client_.primaries();
  } catch (const ConnectionError&) {
    return;  // a slot no node serves: no clocks
  }
  for (const std::string& node : nodes) {
    try {
      const Reply time = client_.call_on(node, Call::read({"TIME"}));
      if (std::optional<std::int64_t> ms = time_reply_ms(time)) {
        clocks_[node] = ServerClock{*ms, std::chrono::steady_clock::now()};
      }
    } catch (const ConnectionError&) {
    }
  }
}

std::optional<std::int64_t> PutRunner::server_now_ms(int slot) {
  if (!clocks_read_) read_clocks();
  // After a failover the slot's new primary has no clock here: its rows go to the script.
  auto clock = clocks_.find(client_.slot_owner(slot));
  if (clock == clocks_.end()) return std::nullopt;
  // Read after the answer came, the estimate trails the server's clock by the answer's way
  // back: an entry never carries a time later than its write. (A slot that moves to another
  // primary mid-run takes entries timed by its old primary's clock.)
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - clock->second.read_at);
  return clock->second.ms + elapsed.count();
}

void PutRunner::begin_load_script(Window& window,
                                  const std::map<int, std::vector<PutItem*>>& groups) {
  std::vector<Call> calls;
  window.sent.clear();
  window.batches.clear();
  for (const auto& [slot, group] : groups) {
    for (std::size_t at = 0; at < group.size(); at += kLoadBatch) {
      const std::size_t end = std::min(group.size(), at + kLoadBatch);
      std::vector<LoadRow> rows;
      for (std::size_t i = at; i < end; ++i) {
        rows.push_back(LoadRow{group[i]->result.key, group[i]->value});
        window.sent.push_back(group[i]);
      }
      calls.push_back(load_call(rows, ttl_s_, log_, change_));
      window.batches.push_back(end - at);
    }
  }
  if (calls.empty()) {
    window.written = true;
    return;
  }
  client_.start(std::move(calls));
  window.step = Step::load;
  wire_.push_back(&window);
}

std::vector<PutItem*> PutRunner::apply_load(const Window& window, const std::vector<PutItem*>& sent,
                                            const std::vector<CallResult>& results) const {
  // An integer per row: 1 the key was created with its entry, 0 it was there.
  return apply_batches(
      window, sent, results,
      [](const Reply& reply, std::size_t row, std::size_t rows) {
        // After the rows, a change log list of another type that took no entry (load-2.lua).
        const bool lost = reply.type == Reply::Type::array && reply.elements.size() == rows + 1 &&
                          reply.elements[rows].type == Reply::Type::string;
        if (reply.type != Reply::Type::array || (reply.elements.size() != rows && !lost)) {
          return std::optional<long long>();
        }
        if (lost && row == 0) print_warning(log_lost_warning(reply.elements[rows].str));
        return std::optional<long long>(reply.elements[row].integer);
      },
      [](const Reply&) { return std::string("unexpected reply from the load script"); });
}

bool PutRunner::reads_holds() const { return mode_.force; }

Call PutRunner::holds_call(const PutItem& item) {
  return Call::read({"EXISTS", companion_key(item.result.key, kHoldsSuffix)});
}

Call PutRunner::call_for(Step step, const PutItem& item) const {
  const std::string& key = item.result.key;
  switch (step) {
    case Step::set: {
      // SET NX is all init needs where keys are missing (the common case).
      Call call = Call::idempotent_write({"SET", key, std::to_string(item.value), "NX"});
      if (ttl_s_ > 0) {
        call.args.emplace_back("EX");
        call.args.push_back(std::to_string(ttl_s_));
      }
      return call;
    }
    case Step::get:
      return Call::read({"GET", key});
    case Step::mset:  // begin_mset and begin_load_script build their calls, a row per item
    case Step::load:
    case Step::script:
      break;
  }
  return put_call(PutRequest{key, item.value, item.counts_held, mode_, ttl_s_, &log_, change_});
}

std::vector<PutItem*> PutRunner::apply_set(const std::vector<PutItem*>& sent,
                                           std::vector<CallResult>& results) const {
  std::vector<PutItem*> next;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    const CallResult& result = results[i];
    ItemResult& r = sent[i]->result;
    if (result.state != CallResult::State::replied) {
      set_error(r, Status::error, result.error);
    } else if (result.reply.is_error()) {
      apply_error_reply(r, result.reply.str);
    } else if (result.reply.is_nil()) {
      sent[i]->after_unknown = result.after_unknown;
      next.push_back(sent[i]);  // the key exists: NX stored nothing
    } else {
      apply_put_verdict(r, "created", std::nullopt, sent[i]->value, mode_);
      if (is_written(r.status)) check_durability(r, result, client_.options());
    }
  }
  return next;
}

bool PutRunner::may_have_holds(const std::vector<PutItem*>& items) {
  if (!scheme_) return false;
  const bool cluster = is_cluster();
  if (holds_in_slot_.empty()) holds_in_slot_.assign(cluster ? kClusterSlots : 1, -1);
  std::vector<int> unread;
  bool found = false;
  for (const PutItem* item : items) {
    const int slot = cluster ? key_slot(item->result.key) : 0;
    if (holds_in_slot_[slot] == 1) found = true;
    if (holds_in_slot_[slot] != -1) continue;
    holds_in_slot_[slot] = 0;  // asked below, once
    unread.push_back(slot);
  }
  if (unread.empty()) return found;
  std::vector<Call> calls;
  calls.reserve(unread.size());
  for (int slot : unread) {
    calls.push_back(Call::read(
        {"EXISTS", cluster ? group_index_key(*scheme_, slot) : holds_index_key(*scheme_)}));
  }
  const std::vector<CallResult> results = client_.run(calls);
  for (std::size_t i = 0; i < unread.size(); ++i) {
    const CallResult& r = results[i];
    // What cannot be read may have holds: the put script is right either way.
    const bool exists = r.state != CallResult::State::replied ||
                        r.reply.type != Reply::Type::integer || r.reply.integer != 0;
    if (exists) {
      holds_in_slot_[unread[i]] = 1;
      found = true;
    }
  }
  return found;
}

bool PutRunner::is_cluster() {
  if (!cluster_) {
    const std::vector<std::string> nodes = client_.primaries();
    cluster_ = !(nodes.size() == 1 && nodes.front().empty());
  }
  return *cluster_;
}

std::vector<PutItem*> PutRunner::apply_get(const std::vector<PutItem*>& sent,
                                           const std::vector<CallResult>& results) {
  std::vector<PutItem*> to_write;
  const std::size_t stride = reads_holds() ? 2 : 1;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    PutItem& item = *sent[i];
    const CallResult& result = results[stride * i + stride - 1];
    // Unless an EXISTS said the item has no holds, it may have expired ones to give back.
    const bool may_have_holds = stride == 1 || !is_zero(results[stride * i]);
    if (result.state != CallResult::State::replied) {
      set_error(item.result, Status::error, result.error);
      continue;
    }
    if (result.reply.is_error()) {
      apply_error_reply(item.result, result.reply.str);
      continue;
    }
    std::optional<std::string> live = result.reply.string_or_nil();
    if (live && is_split_record(*live)) {
      // A split item's units are in its buckets: it is judged on their total, and a forced
      // write must not replace the record and leave them behind (docs/split.md).
      split_found_.emplace_back(&item, *live);
      continue;
    }
    // Only rebuild, --force and values that count held units care whether a live value differs
    // (the row's value is formatted for those only).
    const bool compared = mode_.rebuild || mode_.force || item.counts_held;
    const bool equal = compared && live && *live == std::to_string(item.value);
    const bool same = (mode_.force || item.counts_held) && equal;
    // A value that counts held units is compared with, or stored as, the value less the
    // item's held units, which only the script reads in the same moment as the stock (in a dry
    // run it only peeks): items with holds and drifting items take that step, the others are
    // done with the GET.
    const bool needs_held = item.counts_held && !same;
    // A live value that differs from the row may only lack the units of expired holds not yet
    // given back: the script gives them back first (in a dry run it counts them), so that
    // rebuild's drift and a forced write's previous value are the item's logical stock. Rows
    // equal to the live value, and init without --force, stay with the GET.
    const bool needs_logical = (mode_.rebuild || mode_.force) && live && !equal;
    // A forced write of the value the key holds changes nothing unless the item has holds:
    // expired ones must be given back first (the script does; in a dry run it counts them in
    // the previous value), or they would come back on top of the stock it was meant to set.
    const bool forced_over_holds = mode_.force && same && may_have_holds;
    if (needs_held || needs_logical || forced_over_holds ||
        (!mode_.dry_run && (!live || (mode_.force && (!same || ttl_s_ > 0))))) {
      to_write.push_back(&item);  // the script decides atomically, under the item's init lock
    } else if (same && mode_.force && !mode_.dry_run) {
      // Writing the value the key holds, keeping its expiry, to an item without holds would
      // change nothing: the forced write is this GET's moment, and it is reported as one.
      apply_put_verdict(item.result, "replaced", live, item.value, mode_);
    } else {
      apply_put_verdict(item.result, live ? "kept" : "absent", live, item.value, mode_);
      if (live && item.after_unknown) item.result.note = kMaybeOwnWrite;
    }
  }
  return to_write;
}

std::optional<std::string> PutRunner::split_record_kept(const CallResult& result) {
  if (result.state != CallResult::State::replied || result.reply.is_error()) return std::nullopt;
  const std::optional<PutAnswer> answer = parse_put_answer(result.reply);
  if (answer && answer->verdict == "kept" && answer->previous &&
      is_split_record(*answer->previous)) {
    return answer->previous;
  }
  return std::nullopt;
}

void PutRunner::apply_script(PutItem& item, const CallResult& result) {
  if (std::optional<std::string> record = split_record_kept(result)) {
    // The script kept a layout record: the item is judged on its total once the window's steps
    // are read (settle_split_items, which never gets here: it checks first).
    split_found_.emplace_back(&item, std::move(*record));
    return;
  }
  ItemResult& r = item.result;
  if (result.state != CallResult::State::replied) return set_error(r, Status::error, result.error);
  const Reply& reply = result.reply;
  if (reply.is_error()) return apply_error_reply(r, reply.str);
  std::optional<PutAnswer> answer = parse_put_answer(reply);
  if (!answer) {
    return set_error(
        r, Status::error,
        fmt::format("unexpected reply from the put script: {}", describe_reply(reply)));
  }
  apply_put_verdict(r, answer->verdict, answer->previous, stock_less_held(item.value, answer->held),
                    mode_);
  // A key the script found (kept, or replaced by --force) may be the lost try's own write.
  if ((result.after_unknown || item.after_unknown) && answer->previous) r.note = kMaybeOwnWrite;
  if (is_written(r.status) && !mode_.dry_run) check_durability(r, result, client_.options());
}

void PutRunner::wait_for_lock_holders(std::vector<PutItem*>& locked) {
  // Someone is initializing these keys right now; give them --lock-wait to finish, then look
  // again. Whatever is still locked then is reported busy.
  Backoff backoff(lock_.wait_ms, 5, 100);
  while (!locked.empty() && backoff.pause()) {
    std::vector<Call> calls;
    calls.reserve(locked.size());
    for (PutItem* item : locked) calls.push_back(call_for(Step::script, *item));
    std::vector<CallResult> results = client_.run(calls);
    std::vector<PutItem*> still;
    for (std::size_t i = 0; i < locked.size(); ++i) {
      apply_script(*locked[i], results[i]);
      if (locked[i]->result.status == Status::busy) still.push_back(locked[i]);
    }
    locked.swap(still);
  }
  if (interrupted()) {
    for (PutItem* item : locked) set_not_applied(item->result, interrupt_reason());
    return;
  }
  // What is still locked stays busy, saying who holds each lock and for how long.
  std::vector<std::string> keys;
  keys.reserve(locked.size());
  for (PutItem* item : locked) keys.push_back(companion_key(item->result.key, kLockSuffix));
  const std::vector<std::string> held = describe_held_locks(client_, keys);
  for (std::size_t i = 0; i < locked.size(); ++i) {
    locked[i]->result.error += fmt::format(" after {} ms: {}", lock_.wait_ms, held[i]);
  }
}

void PutRunner::settle_split_items() {
  std::vector<std::pair<PutItem*, std::string>> found;
  found.swap(split_found_);
  for (auto& [item, record] : found) {
    if (mode_.force && !mode_.dry_run) {
      force_split_item(*item, record);
    } else {
      judge_split_item(*item, record);
    }
  }
}

// init and rebuild without --force, and dry runs: the item exists, and its value is its total.
void PutRunner::judge_split_item(PutItem& item, const std::string& record) {
  ItemResult total = item.result;
  read_split_item(client_, total, record, {});
  if (total.status != Status::ok || !total.stock) {
    return set_error(item.result, Status::error, total.error);
  }
  apply_put_verdict(item.result, "kept", std::to_string(*total.stock), item.value, mode_);
  item.result.buckets = total.buckets;
}

// A forced write of a split item sets its total at one moment: the buckets are merged back into
// the stock key (the crash-safe steps of a merge, request ids carried), the put script writes
// that key as for any item, and the item is split again over as many buckets. A crash between
// the steps leaves it merged, every unit counted; splitting it again is `stockctl split`.
void PutRunner::force_split_item(PutItem& item, const std::string& record) {
  ItemResult& r = item.result;
  const std::optional<SplitRecord> layout = parse_split_record(record);
  if (!layout || layout->state != SplitState::live) return judge_split_item(item, record);
  if (ttl_s_ > 0) {
    return set_error(r, Status::error,
                     fmt::format("--ttl: item {} is split over {} buckets, and a split item's "
                                 "stock cannot expire; nothing written",
                                 quote_value(r.sku), layout->target.buckets()));
  }
  // The row's layout where it gives one (an export's `buckets` column), else the item's own.
  const int buckets = item.buckets > 0 ? item.buckets : layout->target.buckets();
  item.layout_set = true;
  if (buckets == layout->target.buckets()) {
    // Writing the total the buckets hold, in the layout they have, would change nothing: the
    // forced write is this read's moment, as for an item that is not split.
    ItemResult total = r;
    read_split_item(client_, total, record, {});
    if (total.status == Status::ok && total.stock == item.value) {
      apply_put_verdict(r, "replaced", std::to_string(*total.stock), item.value, mode_);
      r.buckets = total.buckets;
      return;
    }
  }
  // What the GET read must still be there: an operator's split or merge since then is theirs.
  std::optional<std::string> stored;
  if (!read_stored_value(client_, r, stored)) return;
  if (stored != record) {
    return set_error(r, Status::error,
                     "the item was split or merged by another process while this run read it; "
                     "nothing written; run it again");
  }
  ItemResult merge = r;
  merge.op = "split";
  SplitRunner(client_, slot_ranges(), log_).run(merge, 1);
  if (merge.status != Status::ok) {
    return set_error(r, Status::error,
                     fmt::format("merging its {} buckets before the forced write: {}; nothing "
                                 "written",
                                 layout->target.buckets(), merge.error));
  }
  std::vector<CallResult> results = client_.run({call_for(Step::script, item)});
  if (split_record_kept(results[0])) {
    // Another process split the merged item before the write: nothing was written, and its
    // layout is that process's to keep.
    return set_error(r, Status::error,
                     "the item was split again by another process between the merge and the "
                     "forced write; nothing written; run it again");
  }
  apply_script(item, results[0]);
  split_after_write(r, buckets, is_written(r.status) ? "written" : "not written (" + r.error + ")");
}

void PutRunner::split_after_write(ItemResult& r, int buckets, const std::string& written) {
  ItemResult split = r;
  split.op = "split";
  SplitRunner(client_, slot_ranges(), log_).run(split, buckets);
  if (split.status == Status::ok || split.status == Status::unlimited) {
    r.buckets = split.buckets;  // an unlimited value stays merged: unlimited items are not split
    return;
  }
  set_error(r, Status::error,
            fmt::format("{}, but splitting it over {} buckets failed: {}; stockctl split {} "
                        "--buckets {} does it",
                        written, buckets, split.error, r.sku, buckets));
}

const std::vector<SlotRange>& PutRunner::slot_ranges() {
  if (!ranges_) ranges_ = read_slot_ranges(client_, is_cluster());
  return *ranges_;
}

// An item this run wrote (created, or replaced by --force) whose row says it was split (an
// export's `buckets` column) is split again with the steps of `split`, so that an export's
// round trip keeps the layout. A dry run says what it would be.
void PutRunner::split_written(std::vector<PutItem>& items) {
  for (PutItem& item : items) {
    ItemResult& r = item.result;
    if (item.buckets < 2 || item.layout_set || r.status != Status::ok) continue;
    if (mode_.dry_run) {
      r.buckets = item.buckets;
      continue;
    }
    split_after_write(r, item.buckets, "written");
  }
}

}  // namespace stockctl
