#include "bulk/split_adjust.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <numeric>
#include <random>

#include "base/backoff.h"
#include "base/text.h"
#include "bulk/replica_ack.h"
#include "bulk/split_runner.h"
#include "core/quantity.h"
#include "core/sku.h"
#include "core/split_plan.h"
#include "redis/scripts/split.h"

namespace stockctl {
namespace {

std::string in_progress(SplitState state) {
  return fmt::format(
      "a split or merge of the item is in progress ({}); the same stockctl split command "
      "finishes it",
      split_state_name(state));
}

// How often a deduction whose chosen bucket was emptied by other buyers meanwhile scans again.
constexpr int kScanRounds = 5;

// How long a sold-out hint lives: what stays cheap for a second is a sold-out item under load.
constexpr long long kSoldOutHintLifeMs = 1000;

// How long an add counts as running on each bucket once it registered there (and how long its
// marks in the hint keys stay): the longest its units' call can take (--retry-timeout and
// --timeout, twice over) and a minute more. An add cut off, or whose units' outcome is unknown,
// keeps hints away that long. An add whose registering took longer than kRegisterFreshFor
// registers again before it adds.
constexpr long long kAddRunningBaseMs = 60000;
constexpr auto kRegisterFreshFor = std::chrono::seconds(20);

std::uint64_t split_random() {
  static std::mt19937_64 random{std::random_device{}()};
  return random();
}

// A word of its own for an add or a hint (lua/split_bucket-3.lua).
std::string new_nonce() { return fmt::format("{:016x}", split_random()); }

// The stocks of a scan, or nullopt when a bucket is gone or holds no stock value: the layout
// changed under the scan.
std::optional<std::vector<std::int64_t>> every_stock(
    const std::vector<std::optional<std::int64_t>>& read) {
  std::vector<std::int64_t> stocks;
  stocks.reserve(read.size());
  for (const std::optional<std::int64_t>& stock : read) {
    if (!stock) return std::nullopt;
    stocks.push_back(*stock);
  }
  return stocks;
}

std::int64_t total_of(const std::vector<std::int64_t>& stocks) {
  return std::accumulate(stocks.begin(), stocks.end(), std::int64_t{0});
}

std::int64_t others_than(const std::vector<std::int64_t>& stocks, int home) {
  return total_of(stocks) - stocks[static_cast<std::size_t>(home)];
}

}  // namespace

std::optional<std::string> split_record_of(Client& client, const ItemResult& item) {
  if (item.key.empty()) return std::nullopt;
  const std::vector<CallResult> results = client.run({Call::read({"GET", item.key})});
  const CallResult& result = results[0];
  if (result.state != CallResult::State::replied || result.reply.is_error()) return std::nullopt;
  std::optional<std::string> value = result.reply.string_or_nil();
  if (!value || !is_split_record(*value)) return std::nullopt;
  return value;
}

void apply_to_split_item(Client& client, OpRunner& runner, OpRunner::Op op,
                         const OpOptions& options, const ChangeLogSettings& log, ItemResult& item,
                         StuckLayouts* stuck) {
  // The stock script found a layout record; by the next read the item may be plain again (a
  // merge finished) and, on the plain path, split again: each turn takes the path the item has
  // then, within --retry-timeout, as a deduction waits for a split in progress.
  Backoff wait(client.options().retry_timeout_ms, 10, 200, true);
  for (bool first = true; item.status == Status::error && refused_as_split(item.error, item.sku);
       first = false) {
    if (!first && !wait.pause()) {
      set_not_applied(item, fmt::format("the item was split and merged again and again under "
                                        "this {}; run it again",
                                        item.op));
      return;
    }
    ItemResult again = item;
    again.error.clear();
    if (std::optional<std::string> record = split_record_of(client, item)) {
      SplitAdjust adjust(client, op, options, log);
      adjust.remember_stuck(stuck);
      if (adjust.run(again, std::move(*record))) {
        item = again;
        return;
      }
    }
    // Merged meanwhile: a plain item again.
    std::vector<ItemResult> items{again};
    runner.run(items);
    item = items[0];
  }
}

bool SplitAdjust::run(ItemResult& item, std::string record) {
  moved_ = 0;
  const bool split = run_on_layouts(item, std::move(record));
  log_moves(item);
  return split;
}

void SplitAdjust::log_moves(const ItemResult& item) {
  if (moved_ == 0) return;
  log_rebalance_entry(
      client_, item, moved_, std::nullopt, log_, item.request_id,
      fmt::format("the entry of the units this {} moved between the buckets, in its change log",
                  item.op));
}

bool SplitAdjust::run_on_layouts(ItemResult& item, std::string record) {
  Backoff wait(client_.options().retry_timeout_ms, 10, 200, true);
  while (true) {
    if (!is_split_record(record)) return false;
    const std::optional<SplitRecord> layout = parse_split_record(record);
    if (!layout) {
      set_error(item, Status::error,
                fmt::format("layout record {} of {} cannot be read; nothing changed",
                            quote_value(record), item.key));
      return true;
    }
    const bool live = layout->state == SplitState::live;
    if (!live && stuck_ != nullptr) {
      const auto waited = stuck_->find(item.key);
      if (waited != stuck_->end() && waited->second == record) {
        set_not_applied(item, in_progress(layout->state) +
                                  " (an earlier row of this run waited --retry-timeout for it)");
        return true;
      }
    }
    if (live && attempt(item, layout->target) == Outcome::done) return true;
    // The attempt found a bucket of this live layout gone or not a stock value. When the
    // layout record still says the same (a layout never comes back once replaced), no split or
    // merge replaced it: the bucket was deleted or written by hand, and waiting cannot help.
    if (live) {
      std::optional<std::string> now = split_record_of(client_, item);
      if (now && *now == record && bad_bucket(item, layout->target)) return true;
    }
    // A split or merge under way, or a bucket of the live layout gone or drained (its layout
    // is being replaced): read the layout again after a pause, up to --retry-timeout.
    if (!wait.pause()) {
      if (!live && stuck_ != nullptr) (*stuck_)[item.key] = record;
      set_not_applied(item, live ? fmt::format("the item's buckets kept changing under this {} "
                                               "(a bucket missing, or a split or merge running)",
                                               item.op)
                                 : in_progress(layout->state));
      return true;
    }
    std::optional<std::string> again = split_record_of(client_, item);
    if (!again) return false;
    record = std::move(*again);
  }
}

bool SplitAdjust::bad_bucket(ItemResult& item, const BucketLayout& layout) {
  std::optional<std::string> problem = bad_bucket_problem(client_, item.key, layout, item.sku);
  if (problem) set_error(item, Status::error, *problem);
  return problem.has_value();
}

SplitAdjust::Outcome SplitAdjust::attempt(ItemResult& item, const BucketLayout& layout) {
  item.buckets = layout.buckets();
  const int home = home_bucket(item.request_id, layout.buckets(), split_random());
  if (op_ == OpRunner::Op::add) return add(item, layout, home);
  if (!item.request_id.empty()) return deduct_with_id(item, layout, home);
  return deduct(item, layout, home);
}

std::optional<StockAnswer> SplitAdjust::call_bucket(ItemResult& item, const BucketLayout& layout,
                                                    int index, bool with_id, bool& changed,
                                                    bool short_unrecorded) {
  changed = false;
  StockRequest request{bucket_key(item.key, layout, index),
                       op_ == OpRunner::Op::deduct ? "deduct" : "add",
                       *item.qty,
                       "",
                       0,
                       with_id ? item.request_id : std::string(),
                       options_.request_ttl_s,
                       &log_,
                       0,
                       short_unrecorded};
  last_ = client_.run({stock_call(request)})[0];
  if (last_.state != CallResult::State::replied) {
    set_error(item, Status::error, last_.error);
    return std::nullopt;
  }
  if (last_.reply.is_error()) {
    // A drained bucket holds a record that is not a stock value: its layout is being replaced.
    // Any other value that is not one is the bucket's own corruption, reported as such.
    const std::string& text = last_.reply.str;
    changed = last_.reply.error_kind() == ErrorReply::stockctl_corrupt &&
              parse_drained_bucket(std::string_view(text).substr(text.find(' ') + 1));
    if (!changed) {
      const std::string item_key = item.key;
      item.key = request.key;  // the message names the bucket
      apply_error_reply(item, text);
      item.key = item_key;
    }
    return std::nullopt;
  }
  std::optional<StockAnswer> answer = parse_stock_answer(last_.reply);
  // A bucket that is gone (-3: not initialized, no initial stock sent) belonged to a layout
  // that a split or merge has replaced.
  changed = answer && answer->answer == -3;
  if (!answer) {
    set_error(item, Status::error,
              fmt::format("unexpected reply from the {} script: {}", item.op,
                          describe_reply(last_.reply)));
  }
  return changed ? std::nullopt : answer;
}

void SplitAdjust::finish_ok(ItemResult& item, const BucketLayout& layout, int index,
                            const StockAnswer& answer) {
  item.replayed = answer.replayed;
  item.status = Status::ok;
  item.error.clear();
  // The item's stock: this bucket's answer and the others as read now. A repeat of a request
  // id: every bucket as read now, the item's total at the repeat (the ledger keeps the first
  // answer's bucket stock, not the total it was reported with).
  const std::vector<std::optional<std::int64_t>> stocks =
      read_bucket_stocks(client_, item.key, layout);
  std::int64_t total = 0;
  std::optional<int> unreadable;
  for (int i = 0; i < layout.buckets(); ++i) {
    const std::optional<std::int64_t>& stock = stocks[static_cast<std::size_t>(i)];
    if (i == index && !answer.replayed) {
      total += answer.stock;
    } else if (stock) {
      total += *stock;
    } else if (!unreadable) {
      unreadable = i;
    }
  }
  item.stock = total;
  if (unreadable) {
    // Done, but the total cannot be told: never a sum that leaves a bucket out.
    item.stock.reset();
    item.note = fmt::format(
        "the item's total is unknown: bucket {} could not be read as a stock value (stockctl "
        "get {} --details shows every bucket)",
        bucket_key(item.key, layout, *unreadable), quote_value(item.sku));
  }
  if (!item.replayed) check_durability(item, last_, client_.options());
}

SplitAdjust::Outcome SplitAdjust::add(ItemResult& item, const BucketLayout& layout, int home) {
  bool changed = false;
  // The add registers itself on every bucket before its units come: the hints go, no proof
  // that read a hint key before can leave a hint (its compare-and-set finds the add's word),
  // and none is left while it runs. It unregisters after, with another word of its own.
  const std::string nonce = new_nonce();
  std::int64_t total = 0;
  for (int attempt = 0;; ++attempt) {
    const auto marked = std::chrono::steady_clock::now();
    total = 0;
    const Marked registered = mark_add(item, layout, "adding", nonce, &total);
    if (registered != Marked::ok) {
      // Registered on some buckets only: unregistered there at once, so that a failed add
      // does not keep hints away for its running time.
      mark_add(item, layout, "added", nonce);
      return registered == Marked::layout_changed ? Outcome::layout_changed : Outcome::done;
    }
    if (std::chrono::steady_clock::now() - marked < kRegisterFreshFor) break;
    if (attempt == 2) {
      set_not_applied(item,
                      "registering the add on the buckets took longer than 20 s, three "
                      "times");
      return Outcome::done;
    }
  }
  // Each bucket refuses only what would pass the largest stock in it; the item's total must not
  // pass it either (a merge could not hold it, and readers of the total would round it). The
  // total is the buckets' as registering read them (units on their way between two are left
  // out, and two adds near the limit at once can still pass it: docs/split.md). An id already
  // recorded in its home bucket is a repeat of an add that was applied: it answers as recorded.
  const bool past_limit = item.qty && *item.qty > kMaxStock - total;
  const std::optional<bool> repeat = past_limit && !item.request_id.empty()
                                         ? ledger_has_id(item, bucket_key(item.key, layout, home))
                                         : std::optional<bool>(false);
  if (past_limit && !repeat) {
    mark_add(item, layout, "added", nonce);
    item.stock.reset();
    set_not_applied(item,
                    fmt::format("adding {} would take the total of {} past {}, unless id "
                                "{} was applied before, which its ledger could not tell "
                                "(a read failed); run it again",
                                *item.qty, item.key, kMaxStock, quote_value(item.request_id)));
    return Outcome::done;
  }
  if (past_limit && !*repeat) {
    mark_add(item, layout, "added", nonce);
    item.stock.reset();
    set_error(item, Status::error,
              fmt::format("adding {} to {} (a total of {} over {} buckets) would pass {}; nothing "
                          "changed",
                          *item.qty, item.key, total, layout.buckets(), kMaxStock));
    return Outcome::done;
  }
  const std::optional<StockAnswer> answer =
      call_bucket(item, layout, home, !item.request_id.empty(), changed);
  // Unregistered once its units' call was answered. One whose outcome is unknown may still
  // run on the server: it stays registered until its time is up (no hint meanwhile).
  const bool unknown = !answer && !changed && starts_with(item.error, "outcome unknown");
  if (!unknown) mark_add(item, layout, "added", nonce);
  if (changed) return Outcome::layout_changed;
  if (answer) finish_ok(item, layout, home, *answer);
  return Outcome::done;
}

SplitAdjust::Outcome SplitAdjust::deduct(ItemResult& item, const BucketLayout& layout, int home) {
  // A scan proved the item below QTY less than a second ago, with no add since (an add removes
  // the hints and keeps new ones away while it runs): sold out, without a script or a scan.
  const std::optional<std::int64_t> hint = read_sold_out_hint(item, layout, home);
  if (hint && *hint < *item.qty) {
    apply_deduct_answer(item, -2, *hint);
    return Outcome::done;
  }
  bool changed = false;
  int bucket = home;
  for (int round = 0; round <= kScanRounds; ++round) {
    const std::optional<StockAnswer> answer = call_bucket(item, layout, bucket, false, changed);
    if (changed) return Outcome::layout_changed;
    if (!answer) return Outcome::done;
    if (answer->answer >= 0) {
      finish_ok(item, layout, bucket, *answer);
      return Outcome::done;
    }
    // Short: the bucket with the most stock that covers QTY, as every bucket reads now.
    Outcome outcome = Outcome::done;
    const std::optional<std::vector<std::int64_t>> stocks = scan(item, layout, outcome);
    if (!stocks) return outcome;
    const std::optional<int> richest = richest_covering(*stocks, *item.qty, bucket);
    if (richest) {
      bucket = *richest;
      continue;
    }
    if (total_of(*stocks) < *item.qty) {
      const ShortCheck check = prove_short(item, layout);
      if (check.verdict == ShortCheck::Verdict::failed) return Outcome::done;
      if (check.verdict == ShortCheck::Verdict::layout_changed) return Outcome::layout_changed;
      if (check.verdict == ShortCheck::Verdict::look_again) continue;
      leave_sold_out_hints(item, layout, check);
      apply_deduct_answer(item, -2, total_of(check.stocks));
      return Outcome::done;
    }
    // The buckets together cover QTY, no single one does: move what this one lacks into it.
    const Gathered gathered = gather(item, layout, bucket, *stocks);
    if (gathered == Gathered::layout_changed) return Outcome::layout_changed;
    if (gathered == Gathered::failed) return Outcome::done;
  }
  set_not_applied(item, fmt::format("the buckets kept changing under this deduction (other "
                                    "buyers emptying the one that held {} units, or units on "
                                    "their way between buckets), {} times; run it again",
                                    *item.qty, kScanRounds + 1));
  return Outcome::done;
}

SplitAdjust::ShortCheck SplitAdjust::prove_short(ItemResult& item, const BucketLayout& layout) {
  using Verdict = ShortCheck::Verdict;
  std::optional<std::vector<HintPeek>> peeks = peek_hints(item, layout);
  std::string error;
  // Transfers recorded before the scan are finished first (their units are in no bucket).
  const std::optional<std::vector<BucketTransfers>> before =
      read_transfers(client_, item.key, layout, error);
  std::optional<int> finished = before ? finish_recorded(client_, *before, error) : std::nullopt;
  if (!finished) {
    set_not_applied(item, error);
    return {Verdict::failed, {}};
  }
  if (*finished > 0) return {Verdict::look_again, {}};
  Outcome outcome = Outcome::done;
  std::optional<std::vector<std::int64_t>> stocks = scan(item, layout, outcome);
  if (!stocks) {
    return {outcome == Outcome::layout_changed ? Verdict::layout_changed : Verdict::failed, {}};
  }
  if (total_of(*stocks) >= *item.qty) return {Verdict::look_again, {}};
  // A transfer that began after the first read and ended before the scan read its destination
  // is seen in neither read of the records; its source's count of sends shows it.
  const std::optional<std::vector<BucketTransfers>> after =
      read_transfers(client_, item.key, layout, error);
  if (!after) {
    set_not_applied(item, error);
    return {Verdict::failed, {}};
  }
  for (std::size_t b = 0; b < after->size(); ++b) {
    if (!(*after)[b].recorded.empty() || (*after)[b].sent != (*before)[b].sent) {
      return {Verdict::look_again, {}};
    }
  }
  return {Verdict::proven, std::move(*stocks), std::move(peeks)};
}

SplitAdjust::Gathered SplitAdjust::gather(ItemResult& item, const BucketLayout& layout, int into,
                                          const std::vector<std::int64_t>& stocks) {
  const std::string to = bucket_key(item.key, layout, into);
  for (const BucketMove& move : gather_moves(stocks, into, *item.qty)) {
    std::string error;
    switch (move_units(client_, bucket_key(item.key, layout, move.from), to, move.units, error)) {
      case TransferResult::moved:
        moved_ += move.units;
        break;
      case TransferResult::short_at_source:
        return Gathered::moved;  // taken meanwhile: read them all again
      case TransferResult::layout_changed:
        return Gathered::layout_changed;
      case TransferResult::failed:
        set_not_applied(item, error);
        return Gathered::failed;
    }
  }
  return Gathered::moved;
}

std::optional<bool> SplitAdjust::ledger_has_id(const ItemResult& item, const std::string& bucket) {
  const long long now = static_cast<long long>(std::time(nullptr));
  std::vector<Call> calls;
  calls.reserve(3);
  for (std::string& ledger : ledger_keys(bucket, options_.request_ttl_s, now)) {
    calls.push_back(Call::read({"HEXISTS", std::move(ledger), item.request_id}));
  }
  bool unread = false;
  for (const CallResult& result : client_.run(calls)) {
    const bool read =
        result.state == CallResult::State::replied && result.reply.type == Reply::Type::integer;
    if (read && result.reply.integer == 1) return true;
    unread = unread || !read;
  }
  if (unread) return std::nullopt;
  return false;
}

SplitAdjust::Outcome SplitAdjust::deduct_with_id(ItemResult& item, const BucketLayout& layout,
                                                 int home) {
  // The id's ledger is in its home bucket, and the stock script records a short answer there
  // too: it is called once the id is known there (a repeat), the bucket covers QTY, or the
  // buckets together do not (a true insufficient). Otherwise units are moved into it first.
  const std::int64_t qty = *item.qty;
  const std::string home_key = bucket_key(item.key, layout, home);
  // Sold out as a scan proved less than a second ago, with no add since: the id's answer is
  // the home bucket's (a repeat its recorded one; short recorded as insufficient) at once.
  const std::optional<std::int64_t> hint = read_sold_out_hint(item, layout, home);
  if (hint && *hint < qty) {
    const Outcome outcome = call_with_id(item, layout, home, 0, true);
    if (item.status == Status::insufficient) item.stock = std::max(item.stock.value_or(0), *hint);
    return outcome;
  }
  for (int round = 0; round <= kScanRounds; ++round) {
    Outcome outcome = Outcome::done;
    const std::optional<std::vector<std::int64_t>> stocks = scan(item, layout, outcome);
    if (!stocks) return outcome;
    const bool covered = (*stocks)[static_cast<std::size_t>(home)] >= qty;
    if (!covered && !ledger_has_id(item, home_key).value_or(false)) {
      if (total_of(*stocks) >= qty) {
        const Gathered gathered = gather(item, layout, home, *stocks);
        if (gathered == Gathered::layout_changed) return Outcome::layout_changed;
        if (gathered == Gathered::failed) return Outcome::done;
        continue;
      }
      const ShortCheck check = prove_short(item, layout);
      if (check.verdict == ShortCheck::Verdict::failed) return Outcome::done;
      if (check.verdict == ShortCheck::Verdict::layout_changed) return Outcome::layout_changed;
      if (check.verdict == ShortCheck::Verdict::look_again) continue;
      // Proven short: the id's answer is recorded as insufficient.
      leave_sold_out_hints(item, layout, check);
      return call_with_id(item, layout, home, others_than(check.stocks, home), true);
    }
    // Other buyers may empty the home bucket between the scan and the call: unless the scan
    // proved the shortage (or the id has its answer already), a short answer is not recorded
    // and the buckets are read again, so that no id is told "insufficient" while they cover it.
    const Outcome called = call_with_id(item, layout, home, others_than(*stocks, home), !covered);
    if (called != Outcome::scan_again) return called;
  }
  set_not_applied(item, fmt::format("other buyers kept emptying bucket {} before this deduction "
                                    "reached it, {} times; run it again",
                                    home_key, kScanRounds + 1));
  return Outcome::done;
}

SplitAdjust::Outcome SplitAdjust::call_with_id(ItemResult& item, const BucketLayout& layout,
                                               int home, std::int64_t others, bool final_short) {
  bool changed = false;
  const std::optional<StockAnswer> answer =
      call_bucket(item, layout, home, true, changed, !final_short);
  if (changed) return Outcome::layout_changed;
  if (!answer) return Outcome::done;
  if (answer->answer == -2 && !answer->replayed && !final_short) return Outcome::scan_again;
  if (answer->answer >= 0) {
    finish_ok(item, layout, home, *answer);
  } else {
    // The item's stock beside a short answer: the other buckets as the scan read them.
    apply_deduct_answer(item, answer->answer, answer->stock + others);
    item.replayed = answer->replayed;
  }
  return Outcome::done;
}

std::optional<std::vector<std::int64_t>> SplitAdjust::scan(ItemResult& item,
                                                           const BucketLayout& layout,
                                                           Outcome& outcome) {
  std::string unread;
  std::optional<std::vector<std::int64_t>> stocks =
      every_stock(read_bucket_stocks(client_, item.key, layout, &unread));
  if (!unread.empty()) {
    set_not_applied(item, unread);
    outcome = Outcome::done;
    return std::nullopt;
  }
  if (!stocks) outcome = Outcome::layout_changed;
  return stocks;
}

void SplitAdjust::leave_sold_out_hints(const ItemResult& item, const BucketLayout& layout,
                                       const ShortCheck& check) {
  if (!check.peeks) return;  // a bucket's hint key could not be peeked at
  const std::int64_t total = total_of(check.stocks);
  const std::vector<std::string> buckets = bucket_keys(item.key, layout);
  std::vector<Call> calls;
  calls.reserve(buckets.size());
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    // Not waited for by replicas: a hint lost with a failover costs the next scan only.
    const HintPeek& peek = (*check.peeks)[b];
    Call call = sold_out_hint_call(buckets[b], peek.value, total, kSoldOutHintLifeMs, new_nonce(),
                                   peek.at_ms);
    call.writes = false;
    calls.push_back(std::move(call));
  }
  client_.run(calls);  // "stale" is an answer too: an add overtook the proof there
}

std::optional<std::vector<SplitAdjust::HintPeek>> SplitAdjust::peek_hints(
    const ItemResult& item, const BucketLayout& layout) {
  std::vector<Call> calls;
  calls.reserve(layout.slots.size());
  for (const std::string& bucket : bucket_keys(item.key, layout)) {
    calls.push_back(peek_hint_call(bucket));
  }
  std::vector<HintPeek> peeks;
  peeks.reserve(calls.size());
  for (const CallResult& result : client_.run(calls)) {
    if (result.state != CallResult::State::replied || result.reply.is_error()) return std::nullopt;
    const std::optional<SplitAnswer> answer = parse_split_answer(result.reply);
    if (!answer || answer->status != "ok" || answer->more.empty()) return std::nullopt;
    const std::optional<std::int64_t> at = parse_stored_value(answer->more[0]);
    if (!at) return std::nullopt;
    peeks.push_back({answer->value.value_or(""), *at});
  }
  return peeks;
}

std::optional<std::int64_t> SplitAdjust::read_sold_out_hint(const ItemResult& item,
                                                            const BucketLayout& layout, int home) {
  const CallResult result =
      client_.run({Call::read({"GET", bucket_short_key(bucket_key(item.key, layout, home))})})[0];
  if (result.state != CallResult::State::replied || result.reply.is_error()) return std::nullopt;
  const std::optional<std::string> value = result.reply.string_or_nil();
  return value ? parse_sold_out_hint(*value) : std::nullopt;
}

SplitAdjust::Marked SplitAdjust::mark_add(ItemResult& item, const BucketLayout& layout,
                                          const std::string& op, const std::string& nonce,
                                          std::int64_t* total) {
  const ClientOptions& options = client_.options();
  const long long running_ms =
      kAddRunningBaseMs + 2 * (options.retry_timeout_ms + options.reply_timeout_ms);
  const std::vector<std::string> buckets = bucket_keys(item.key, layout);
  std::vector<Call> calls;
  calls.reserve(buckets.size());
  for (const std::string& bucket : buckets) {
    Call call = add_mark_call(bucket, op, nonce, running_ms);
    call.writes = false;  // not waited for by replicas: a mark lost with a failover, docs/split.md
    calls.push_back(std::move(call));
  }
  const std::vector<CallResult> results = client_.run(calls);
  // Unregistering after the units came changes nothing of the item's answer: an add left
  // registered only keeps hints away until its time is up.
  if (op != "adding") return Marked::ok;
  for (std::size_t b = 0; b < results.size(); ++b) {
    const CallResult& r = results[b];
    if (r.state != CallResult::State::replied || r.reply.is_error()) {
      set_not_applied(item,
                      fmt::format("registering the add on bucket {}: {}", buckets[b],
                                  r.state == CallResult::State::replied ? r.reply.str : r.error));
      return Marked::failed;
    }
    const std::optional<SplitAnswer> answer = parse_split_answer(r.reply);
    if (!answer || answer->status != "ok") return Marked::layout_changed;  // gone or drained
    const std::optional<std::int64_t> stock =
        answer->value ? parse_stored_value(*answer->value) : std::nullopt;
    if (total != nullptr && stock && *stock > 0) *total += *stock;
  }
  return Marked::ok;
}

}  // namespace stockctl
