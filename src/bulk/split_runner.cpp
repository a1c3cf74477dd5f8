#include "bulk/split_runner.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <map>
#include <random>

#include "base/diagnostics.h"
#include "base/text.h"
#include "bulk/replica_ack.h"
#include "core/outcome.h"
#include "core/quantity.h"
#include "core/sku.h"
#include "core/split_plan.h"
#include "redis/errors.h"
#include "redis/scripts/split.h"

namespace stockctl {
namespace {

// How many states one run may walk through: a transfer in progress finished, then the one
// asked (begin, drain, drained, fill, commit), with room for another process's steps between.
constexpr int kMaxSplitRounds = 16;

// The reply of a call that must have one; nullopt (with the item's error set) when none came or
// the reply is an error.
std::optional<Reply> split_reply_or_error(ItemResult& item, const CallResult& result) {
  if (result.state != CallResult::State::replied) {
    set_error(item, Status::error, result.error);
    return std::nullopt;
  }
  if (result.reply.is_error()) {
    apply_error_reply(item, result.reply.str);
    return std::nullopt;
  }
  return result.reply;
}

std::optional<SplitAnswer> split_answer_or_error(ItemResult& item, const CallResult& result,
                                                 std::string_view script) {
  std::optional<Reply> reply = split_reply_or_error(item, result);
  if (!reply) return std::nullopt;
  std::optional<SplitAnswer> answer = parse_split_answer(*reply);
  if (!answer) {
    set_error(
        item, Status::error,
        fmt::format("unexpected reply from the {} script: {}", script, describe_reply(*reply)));
  }
  return answer;
}

// A step that too few replicas confirmed (--wait-replicas; by default one where the primary
// has a replica) is not built upon: a failover could undo it after the next step counted on
// it (a drained bucket back to its value, while the record counts its units). The item is
// left where it is, every unit counted, and the same command carries on.
bool split_step_confirmed(ItemResult& item, const CallResult& result, const ClientOptions& options,
                          std::string_view step) {
  if (acknowledged(result, options)) return true;
  set_error(item, Status::error,
            fmt::format("{} {}; run the same stockctl split command again", step,
                        unacknowledged(result, options)));
  return false;
}

// A begin that gave the item's expired holds back, and could not log it, says so after its
// answer ("log_lost", the list): the step was taken, and the split goes on.
void warn_if_log_lost(const ItemResult& item, const SplitAnswer& answer) {
  const std::vector<std::string>& more = answer.more;
  const auto marker = std::find(more.begin(), more.end(), "log_lost");
  if (marker == more.end() || marker + 1 == more.end()) return;
  print_warning(fmt::format("split {}: an expired hold's units were given back, but {}",
                            quote_value(item.sku), log_lost_warning(*(marker + 1))));
}

}  // namespace

void stop_split_if_asked(const std::string& step) {
  static const char* const stop_at = std::getenv("STOCKCTL_TEST_STOP_AT");
  if (stop_at != nullptr && step == stop_at) ::kill(::getpid(), SIGKILL);
}

std::vector<SlotRange> read_slot_ranges(Client& client, bool cluster) {
  if (!cluster) return {};
  const std::vector<std::string> primaries = client.primaries();
  const Reply reply = client.call_on(primaries.at(0), Call::read({"CLUSTER", "SLOTS"}));
  if (reply.type != Reply::Type::array) {
    throw ConnectionError(fmt::format("CLUSTER SLOTS: {}", describe_reply(reply)));
  }
  // An empty, nil or "?" host means "the address you reached me at", as the router reads it:
  // the node names must be the router's, or a call_on them would look for a node that is not.
  const std::string& asked = primaries.at(0);
  const std::string asked_host = asked.substr(0, asked.rfind(':'));
  std::vector<SlotRange> ranges;
  for (const Reply& range : reply.elements) {
    if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
    const Reply& primary = range.elements[2];
    std::string host = primary.elements[0].str;
    if (host.empty() || host == "?") host = asked_host;
    ranges.push_back({static_cast<int>(range.elements[0].integer),
                      static_cast<int>(range.elements[1].integer),
                      fmt::format("{}:{}", host, primary.elements[1].integer)});
  }
  return ranges;
}

std::string new_generation() {
  std::random_device random;
  return fmt::format("{:08x}", static_cast<std::uint32_t>(random()));
}

std::optional<std::int64_t> stock_in_bucket(const CallResult& result) {
  if (result.state != CallResult::State::replied || result.reply.is_error()) return std::nullopt;
  const std::optional<std::string> value = result.reply.string_or_nil();
  if (!value) return std::nullopt;
  const std::optional<std::int64_t> stock = parse_stored_value(*value);
  if (!stock || *stock < 0) return std::nullopt;
  return stock;
}

namespace {

// One GET of each of `keys`, pipelined.
std::vector<CallResult> get_each(Client& client, const std::vector<std::string>& keys) {
  std::vector<Call> calls;
  calls.reserve(keys.size());
  for (const std::string& key : keys) calls.push_back(Call::read({"GET", key}));
  return client.run(calls);
}

}  // namespace

std::vector<std::optional<std::int64_t>> read_bucket_stocks(Client& client,
                                                            const std::string& stock_key,
                                                            const BucketLayout& layout,
                                                            std::string* unread) {
  const std::vector<std::string> keys = bucket_keys(stock_key, layout);
  const std::vector<CallResult> results = get_each(client, keys);
  std::vector<std::optional<std::int64_t>> stocks;
  stocks.reserve(results.size());
  for (std::size_t b = 0; b < results.size(); ++b) {
    const CallResult& result = results[b];
    stocks.push_back(stock_in_bucket(result));
    const bool replied = result.state == CallResult::State::replied;
    if (unread != nullptr && (!replied || result.reply.is_error()) && unread->empty()) {
      *unread =
          fmt::format("reading bucket {}: {}", keys[b], replied ? result.reply.str : result.error);
    }
  }
  return stocks;
}

std::optional<std::string> bad_bucket_problem(Client& client, const std::string& stock_key,
                                              const BucketLayout& layout, const std::string& sku) {
  const std::vector<std::string> keys = bucket_keys(stock_key, layout);
  const std::vector<CallResult> results = get_each(client, keys);
  for (std::size_t b = 0; b < results.size(); ++b) {
    const CallResult& r = results[b];
    if (r.state != CallResult::State::replied || r.reply.is_error()) return std::nullopt;
    const std::optional<std::string> value = r.reply.string_or_nil();
    std::string what;
    if (!value) {
      what = "is missing (deleted by hand?)";
    } else if (!stock_in_bucket(r) && !parse_drained_bucket(*value)) {
      what = fmt::format("holds {}, not a stock value", quote_value(*value));
    } else {
      continue;
    }
    return fmt::format(
        "bucket {} {}; nothing changed (repair the bucket by hand; stockctl get {} --details "
        "shows every bucket)",
        keys[b], what, quote_value(sku));
  }
  return std::nullopt;
}

namespace {

// One split_bucket call of a transfer: its answer, or nullopt with `error` saying what failed
// (`what`: the step, as the message names it).
std::optional<SplitAnswer> transfer_step(Client& client, Call call, std::string_view what,
                                         CallResult& result, std::string& error) {
  result = client.run({std::move(call)})[0];
  if (result.state != CallResult::State::replied || result.reply.is_error()) {
    error =
        fmt::format("{}: {}", what,
                    result.state == CallResult::State::replied ? result.reply.str : result.error);
    return std::nullopt;
  }
  std::optional<SplitAnswer> answer = parse_split_answer(result.reply);
  if (!answer) error = fmt::format("{}: {}", what, describe_reply(result.reply));
  return answer;
}

// The source's clock in an "ok" answer to send or confirm.
std::optional<std::int64_t> source_clock(const SplitAnswer& answer) {
  if (answer.status != "ok" || answer.more.empty()) return std::nullopt;
  return parse_stored_value(answer.more[0]);
}

// Steps 2 to 4 of transfer `id` (docs/split.md, "Moving units between buckets"), whose record
// at `from` its replicas confirmed when `from`'s clock read `confirmed_at`: receive at `to`,
// delete the record, then let the receipt expire. Returns "" or why it stopped (the record
// stays: nothing is lost).
std::string receive_transfer(Client& client, const std::string& from, const std::string& id,
                             std::int64_t units, const std::string& to, std::int64_t confirmed_at) {
  const std::string what = fmt::format("receiving transfer {} at {}", quote_value(id), to);
  CallResult received;
  std::string error;
  const std::optional<SplitAnswer> answer =
      transfer_step(client, receive_units_call(to, id, units, confirmed_at + kReceiveWindowS), what,
                    received, error);
  if (!answer) return error;
  if (answer->status == "late") {
    return fmt::format(
        "{}: more than {} s after its record at {} was confirmed (a paused process, or the "
        "two servers' clocks apart); the transfer stays recorded there",
        what, kReceiveWindowS, from);
  }
  if (answer->status != "ok") return fmt::format("{}: {}", what, describe_reply(received.reply));
  // The record at `from` goes only once the units are safe at `to`: a failover that lost the
  // receive after the record went would lose them. Kept, the record is finished again later,
  // and the receipt makes a second receive add nothing if the first one did survive.
  if (!acknowledged(received, client.options())) {
    return fmt::format("{}: {}; the transfer stays recorded at {}", what,
                       unacknowledged(received, client.options()), from);
  }
  stop_split_if_asked("split:receive");
  const CallResult deleted =
      client.run({Call::idempotent_write({"HDEL", bucket_moves_key(from), "out:" + id})})[0];
  // The receipt expires only once the record's deletion is confirmed: a failover that lost
  // the HDEL brings the record back, and finishing it again must find the receipt. A receive
  // still on its way was sent before the HDEL, and its deadline passes long before the
  // receipt goes. Unconfirmed, the receipt stays (one small key), never the units twice.
  if (deleted.state == CallResult::State::replied && !deleted.reply.is_error() &&
      acknowledged(deleted, client.options())) {
    client.run({forget_receipt_call(to, id)});
  }
  return {};
}

}  // namespace

std::string finish_transfer(Client& client, const std::string& from, const std::string& field,
                            const std::string& value) {
  const std::string id = field.substr(field.find(':') + 1);
  const std::size_t space = value.find(' ');
  const std::optional<std::int64_t> units =
      space == std::string::npos ? std::nullopt : parse_stored_value(value.substr(0, space));
  if (!units || *units <= 0) {
    return fmt::format("transfer {} recorded at {} reads {}", quote_value(id), from,
                       quote_value(value));
  }
  const std::string what = fmt::format("confirming transfer {} at {}", quote_value(id), from);
  CallResult confirmed;
  std::string error;
  const std::optional<SplitAnswer> answer =
      transfer_step(client, confirm_transfer_call(from, id), what, confirmed, error);
  if (!answer) return error;
  if (answer->status == "gone") return {};  // another process finished it meanwhile
  const std::optional<std::int64_t> now = source_clock(*answer);
  if (!now) return fmt::format("{}: {}", what, describe_reply(confirmed.reply));
  // Another process sent it: its departure is received only once `from`'s replicas have the
  // record, since a failover that undid the send (the units back at `from`, no record) after
  // the receive would create the units.
  if (!acknowledged(confirmed, client.options())) {
    return fmt::format("{}: {}; the transfer stays recorded there", what,
                       unacknowledged(confirmed, client.options()));
  }
  return receive_transfer(client, from, id, *units, value.substr(space + 1), *now);
}

TransferResult move_units(Client& client, const std::string& from, const std::string& to,
                          std::int64_t units, std::string& error) {
  const std::string id = new_generation() + new_generation();
  CallResult sent;
  const std::optional<SplitAnswer> answer =
      transfer_step(client, send_units_call(from, id, units, to),
                    fmt::format("moving units from {}", from), sent, error);
  if (!answer) return TransferResult::failed;
  if (answer->status == "short") return TransferResult::short_at_source;
  if (answer->status == "changed" || answer->status == "missing") {
    return TransferResult::layout_changed;
  }
  // A resend after a lost reply, and another process finished the transfer since.
  if (answer->status == "finished") return TransferResult::moved;
  const std::optional<std::int64_t> now = source_clock(*answer);
  if (!now) {
    error = fmt::format("moving units from {}: {}", from, describe_reply(sent.reply));
    return TransferResult::failed;
  }
  // The units are received only once their departure is safe at `from`: a failover that lost
  // the send (the units back in `from`, no record) after `to` received them would create them.
  if (!acknowledged(sent, client.options())) {
    error = fmt::format(
        "moving units from {}: {}; the transfer stays recorded there if it "
        "survives, and the next deduction, rebalance or split finishes it",
        from, unacknowledged(sent, client.options()));
    return TransferResult::failed;
  }
  stop_split_if_asked("split:send");
  error = receive_transfer(client, from, id, units, to, *now);
  return error.empty() ? TransferResult::moved : TransferResult::failed;
}

std::optional<std::vector<BucketTransfers>> read_transfers(Client& client,
                                                           const std::string& stock_key,
                                                           const BucketLayout& layout,
                                                           std::string& error) {
  const std::vector<std::string> keys = bucket_keys(stock_key, layout);
  std::vector<Call> calls;
  calls.reserve(keys.size());
  for (const std::string& key : keys) {
    calls.push_back(Call::read({"HGETALL", bucket_moves_key(key)}));
  }
  const std::vector<CallResult> results = client.run(calls);
  std::vector<BucketTransfers> transfers(keys.size());
  for (std::size_t b = 0; b < keys.size(); ++b) {
    const CallResult& r = results[b];
    if (r.state != CallResult::State::replied || r.reply.is_error()) {
      error = fmt::format("reading the transfers of {}: {}", keys[b],
                          r.state == CallResult::State::replied ? r.reply.str : r.error);
      return std::nullopt;
    }
    transfers[b].bucket = keys[b];
    const std::vector<Reply>& fields = r.reply.elements;
    for (std::size_t f = 0; f + 1 < fields.size(); f += 2) {
      if (fields[f].str.rfind("out:", 0) == 0) {
        transfers[b].recorded.emplace_back(fields[f].str, fields[f + 1].str);
      } else if (fields[f].str == "sent") {
        transfers[b].sent = fields[f + 1].str;
      }
    }
  }
  return transfers;
}

std::optional<int> finish_recorded(Client& client, const std::vector<BucketTransfers>& transfers,
                                   std::string& error) {
  int finished = 0;
  for (const BucketTransfers& bucket : transfers) {
    for (const auto& [field, value] : bucket.recorded) {
      error = finish_transfer(client, bucket.bucket, field, value);
      if (!error.empty()) return std::nullopt;
      ++finished;
    }
  }
  return finished;
}

std::optional<int> finish_pending_transfers(Client& client, const std::string& stock_key,
                                            const BucketLayout& layout, std::string& error) {
  const std::optional<std::vector<BucketTransfers>> transfers =
      read_transfers(client, stock_key, layout, error);
  if (!transfers) return std::nullopt;
  return finish_recorded(client, *transfers, error);
}

namespace {

// The units of `transfers` (read before the buckets were) that their destination had not
// received when this reads its receipt: they are in no bucket a reader counted. A transfer
// recorded before the buckets were read had left its source by then, so it is never counted
// twice; one received in between is left out, as any transfer under way. Nullopt, `error` set,
// when a record or receipt cannot be read.
std::optional<std::int64_t> units_in_transfer(Client& client,
                                              const std::vector<BucketTransfers>& transfers,
                                              std::string& error) {
  std::vector<Call> calls;
  std::vector<std::int64_t> units;
  for (const BucketTransfers& bucket : transfers) {
    for (const auto& [field, value] : bucket.recorded) {
      const std::size_t space = value.find(' ');
      const std::optional<std::int64_t> k =
          space == std::string::npos ? std::nullopt : parse_stored_value(value.substr(0, space));
      if (!k || *k <= 0) {
        error = fmt::format("transfer {} recorded at {} reads {}", quote_value(field),
                            bucket.bucket, quote_value(value));
        return std::nullopt;
      }
      const std::string id = field.substr(field.find(':') + 1);
      calls.push_back(Call::read({"EXISTS", receipt_key(value.substr(space + 1), id)}));
      units.push_back(*k);
    }
  }
  if (calls.empty()) return 0;
  const std::vector<CallResult> results = client.run(calls);
  std::int64_t moving = 0;
  for (std::size_t t = 0; t < results.size(); ++t) {
    const CallResult& r = results[t];
    if (r.state != CallResult::State::replied || r.reply.is_error()) {
      error = fmt::format("reading a transfer's receipt: {}",
                          r.state == CallResult::State::replied ? r.reply.str : r.error);
      return std::nullopt;
    }
    if (r.reply.integer == 0) moving += units[t];
  }
  return moving;
}

}  // namespace

void read_split_item(Client& client, ItemResult& item, const std::string& record,
                     const std::vector<SlotRange>& ranges) {
  item.stock.reset();
  const std::optional<SplitRecord> layout = parse_split_record(record);
  if (!layout || layout->state != SplitState::live) {
    return set_error(item, Status::error,
                     layout ? fmt::format("a split or merge of the item is in progress ({}); the "
                                          "same stockctl split command finishes it",
                                          split_state_name(layout->state))
                            : fmt::format("layout record {} of {} cannot be read; left unchanged",
                                          quote_value(record), item.key));
  }
  const BucketLayout& buckets = layout->target;
  // The transfers first, then the buckets, then the receipts: the units of a transfer cut off
  // (a deduction or rebalance killed between its steps) are counted until someone finishes it,
  // so that an export of the item is a whole snapshot (docs/split.md, "Moving units").
  std::string error;
  const std::optional<std::vector<BucketTransfers>> transfers =
      read_transfers(client, item.key, buckets, error);
  const std::vector<std::optional<std::int64_t>> stocks =
      read_bucket_stocks(client, item.key, buckets);
  const std::optional<std::int64_t> moving =
      transfers ? units_in_transfer(client, *transfers, error) : std::nullopt;
  item.buckets = buckets.buckets();
  std::int64_t total = 0;
  std::string unreadable;
  for (int i = 0; i < buckets.buckets(); ++i) {
    const std::optional<std::int64_t>& stock = stocks[static_cast<std::size_t>(i)];
    const std::string key = bucket_key(item.key, buckets, i);
    if (stock) {
      total += *stock;
    } else if (unreadable.empty()) {
      unreadable = key;
    }
    if (item.details) {
      item.bucket_details.push_back(
          {key, stock, node_of_slot(ranges, buckets.slots[static_cast<std::size_t>(i)])});
    }
  }
  if (!unreadable.empty()) {
    return set_error(item, Status::error,
                     fmt::format("bucket {} is missing or does not hold a stock value; the item's "
                                 "total is unknown",
                                 unreadable));
  }
  if (!moving) {
    return set_error(item, Status::error,
                     fmt::format("{}; the item's total is unknown", escape_control(error)));
  }
  item.status = Status::ok;
  item.error.clear();
  item.stock = total + *moving;
}

void SplitRunner::run(ItemResult& item, int buckets) {
  BucketLayout wanted;
  if (buckets > 1) wanted = {new_generation(), choose_bucket_slots(ranges_, item.key, buckets)};
  for (int round = 0; round < kMaxSplitRounds; ++round) {
    std::optional<std::string> stored;
    if (!read_stored_value(client_, item, stored)) return;
    SplitDecision decision = next_split_step(stored, wanted);
    Next next = Next::stop;
    switch (decision.step) {
      case SplitStep::done:
        if (decision.status == Status::error) {
          set_error(item, Status::error, fmt::format("{}: {}", item.key, decision.message));
        } else {
          item.status = decision.status;
          report_done(item, stored);
        }
        return;
      case SplitStep::begin:
        next = begin(item, stored, wanted);
        break;
      case SplitStep::drain:
        next = drain(item, *stored, *decision.record);
        break;
      case SplitStep::fill:
        next = fill(item, *stored, *decision.record);
        break;
    }
    if (next == Next::stop) return;
  }
  set_error(item, Status::error,
            "the item's layout kept changing under this split (another split of it running?); "
            "run the command again");
}

void log_rebalance_entry(Client& client, const ItemResult& item, std::int64_t moved,
                         std::optional<std::int64_t> total, const ChangeLogSettings& log,
                         const std::string& request_id, const std::string& what) {
  const std::optional<Call> entry = rebalance_entry_call(item.key, moved, total, log, request_id);
  if (!entry) return;
  const CallResult result = client.run({*entry})[0];
  if (result.state == CallResult::State::replied && !result.reply.is_error()) return;
  print_warning(
      fmt::format("item '{}': {}: {}", item.sku, what,
                  result.state == CallResult::State::replied ? result.reply.str : result.error));
}

bool read_stored_value(Client& client, ItemResult& item, std::optional<std::string>& stored) {
  const std::vector<CallResult> results = client.run({Call::read({"GET", item.key})});
  std::optional<Reply> reply = split_reply_or_error(item, results[0]);
  if (!reply) return false;
  stored = reply->string_or_nil();
  return true;
}

void SplitRunner::report_done(ItemResult& item, const std::optional<std::string>& stored) {
  item.stock.reset();
  if (item.status != Status::ok || !stored) return;
  if (!is_split_record(*stored)) {
    item.stock = parse_stored_value(*stored);
    return;
  }
  read_split_item(client_, item, *stored, ranges_);
}

SplitRunner::Next SplitRunner::item_step(ItemResult& item, const std::string& op,
                                         const std::string& expected, const BucketLayout& target,
                                         std::int64_t units, const std::string& stop_point) {
  SplitItemRequest request{item.key, op, expected, target, units, &log_};
  const std::vector<CallResult> results = client_.run({split_item_call(request)});
  const std::optional<SplitAnswer> answer = split_answer_or_error(item, results[0], "split_item");
  if (!answer) return Next::stop;
  warn_if_log_lost(item, *answer);
  if (answer->status == "ok") {
    if (!split_step_confirmed(item, results[0], client_.options(), "the split's " + op + " was")) {
      return Next::stop;
    }
    stop_split_if_asked(stop_point);
    return Next::again;
  }
  if (answer->status == "changed") return Next::again;  // read it again and plan anew
  const std::string value = answer->value.value_or("");
  if (answer->status == "missing") {
    item.status = Status::missing;
  } else if (answer->status == "unlimited") {
    item.status = Status::unlimited;
  } else if (answer->status == "held") {
    set_error(item, Status::conflict,
              fmt::format("the item has {} units in holds that are not settled; confirm or "
                          "release them (a hold that has expired gives its units back with "
                          "stockctl reap), then split it; nothing changed",
                          value));
  } else if (answer->status == "expires") {
    set_error(item, Status::conflict,
              fmt::format("the item's key expires in {} ms (--ttl), and buckets never expire; "
                          "an item with an expiry is not split; nothing changed",
                          value));
  } else if (answer->status == "corrupt") {
    set_error(item, Status::error,
              fmt::format("stored value {} of {} is not a stock value; left unchanged",
                          quote_value(value), item.key));
  } else {
    set_error(item, Status::error,
              fmt::format("unexpected answer from the split_item script: {}",
                          quote_value(answer->status)));
  }
  return Next::stop;
}

SplitRunner::Next SplitRunner::begin(ItemResult& item, const std::optional<std::string>& stored,
                                     const BucketLayout& wanted) {
  const bool split = stored && is_split_record(*stored);
  if (split) {
    // Every bucket must hold a stock value before any is drained: a bucket written by hand is
    // refused here, with nothing changed, rather than found halfway through the drain.
    const std::optional<SplitRecord> record = parse_split_record(*stored);
    const std::vector<std::optional<std::int64_t>> stocks =
        read_bucket_stocks(client_, item.key, record->target);
    for (int i = 0; i < record->target.buckets(); ++i) {
      if (stocks[static_cast<std::size_t>(i)]) continue;
      set_error(item, Status::error,
                fmt::format("bucket {} is missing or does not hold a stock value; nothing "
                            "changed (repair it, then split again)",
                            bucket_key(item.key, record->target, i)));
      return Next::stop;
    }
  }
  return item_step(item, "begin", split ? *stored : "plain", wanted, 0, "split:begin");
}

SplitRunner::Next SplitRunner::drain(ItemResult& item, const std::string& stored,
                                     const SplitRecord& record) {
  // One bucket at a time: each is drained by its own script, and a crash between two leaves
  // some drained and some not, which the drain state counts both ways.
  std::int64_t units = 0;
  for (int i = 0; i < record.from.buckets(); ++i) {
    const std::string key = bucket_key(item.key, record.from, i);
    std::vector<CallResult> results = client_.run({drain_bucket_call(key, record.from.gen)});
    std::optional<SplitAnswer> answer = split_answer_or_error(item, results[0], "split_bucket");
    // Units this bucket sent that have not arrived yet: they arrive first (at a bucket drained
    // already, into its record), then the bucket is drained.
    if (answer && answer->status == "moving") {
      if (!finish_sent(item, key, *answer)) return Next::stop;
      results = client_.run({drain_bucket_call(key, record.from.gen)});
      answer = split_answer_or_error(item, results[0], "split_bucket");
    }
    if (!answer) return Next::stop;
    const std::optional<std::int64_t> drained =
        answer->value ? parse_stored_value(*answer->value) : std::nullopt;
    if (answer->status != "ok" || !drained || *drained < 0) {
      set_error(item, Status::error,
                fmt::format("bucket {} is {}: its units are not accounted for; the item is left "
                            "being drained, nothing more changed",
                            key,
                            answer->status == "missing"
                                ? std::string("missing")
                                : "holding " + quote_value(answer->value.value_or(""))));
      return Next::stop;
    }
    if (!split_step_confirmed(item, results[0], client_.options(),
                              fmt::format("draining bucket {} was", key))) {
      return Next::stop;
    }
    stop_split_if_asked(fmt::format("split:drain:{}", i));
  }
  // Every bucket drained: their records now hold every unit, those of transfers that arrived
  // at a bucket drained before them included. Read them all again for the sum.
  for (int i = 0; i < record.from.buckets(); ++i) {
    const std::string key = bucket_key(item.key, record.from, i);
    const std::vector<CallResult> results = client_.run({drain_bucket_call(key, record.from.gen)});
    const std::optional<SplitAnswer> answer =
        split_answer_or_error(item, results[0], "split_bucket");
    const std::optional<std::int64_t> drained = answer && answer->status == "ok" && answer->value
                                                    ? parse_stored_value(*answer->value)
                                                    : std::nullopt;
    if (!drained) {
      if (answer)
        set_error(item, Status::error, fmt::format("bucket {} changed while drained", key));
      return Next::stop;
    }
    units += *drained;
  }
  return item_step(item, "drained", stored, record.target, units, "split:drained");
}

bool SplitRunner::finish_sent(ItemResult& item, const std::string& key, const SplitAnswer& moving) {
  std::vector<std::string> fields;
  if (moving.value) fields.push_back(*moving.value);
  fields.insert(fields.end(), moving.more.begin(), moving.more.end());
  for (std::size_t f = 0; f + 1 < fields.size(); f += 2) {
    const std::string why = finish_transfer(client_, key, fields[f], fields[f + 1]);
    if (!why.empty()) {
      set_error(item, Status::error, why + "; the item is left being drained, every unit counted");
      return false;
    }
  }
  return true;
}

namespace {

// A request record as it is copied to the new layout's ledger. One that a bucket wrote holds the
// bucket's stock, not the item's: marked " c", a repeat answers with the item's stock at the
// repeat instead (lua/stock-2.lua, "Records").
std::string carried_record(const std::string& record, bool from_bucket) {
  if (!from_bucket || ends_with(record, " c")) return record;
  return record + " c";
}

}  // namespace

bool SplitRunner::carry_ledgers(ItemResult& item, const SplitRecord& record) {
  // Nothing writes to either layout's ledgers now: the old one is drained (or the stock key
  // holds the record), and deductions wait until the new one is live.
  const long long now = static_cast<long long>(std::time(nullptr));
  const std::vector<std::string> sources =
      record.from.plain() ? std::vector<std::string>{item.key} : bucket_keys(item.key, record.from);
  std::vector<Call> reads;
  std::vector<std::string> source_ledgers;
  for (const std::string& source : sources) {
    for (std::string& ledger : ledger_keys(source, request_ttl_s_, now)) {
      reads.push_back(Call::read({"HGETALL", ledger}));
      reads.push_back(Call::read({"PTTL", ledger}));
      source_ledgers.push_back(std::move(ledger));
    }
  }
  const std::vector<CallResult> read = client_.run(reads);
  // Per destination ledger: the records to copy, and the longest life left of their sources.
  std::map<std::string, std::pair<std::vector<std::string>, long long>> copies;
  for (std::size_t l = 0; l < source_ledgers.size(); ++l) {
    const CallResult& fields = read[2 * l];
    const CallResult& pttl = read[2 * l + 1];
    if (fields.state != CallResult::State::replied || fields.reply.is_error()) {
      set_error(
          item, Status::error,
          fmt::format("reading request ledger {}: {}; the item is left being {}", source_ledgers[l],
                      fields.state == CallResult::State::replied ? fields.reply.str : fields.error,
                      record.target.plain() ? "merged" : "split"));
      return false;
    }
    const std::size_t generation = l % 3;  // ledger_keys' order: current, previous, next
    const std::vector<Reply>& pairs = fields.reply.elements;
    for (std::size_t f = 0; f + 1 < pairs.size(); f += 2) {
      const std::string& id = pairs[f].str;
      if (id.empty()) continue;  // the ledger's mark, not an id (lua/stock-2.lua)
      const std::string home =
          record.target.plain()
              ? item.key
              : bucket_key(item.key, record.target, home_bucket(id, record.target.buckets(), 0));
      auto& [args, life_ms] = copies[ledger_keys(home, request_ttl_s_, now)[generation]];
      args.push_back(id);
      args.push_back(carried_record(pairs[f + 1].str, !record.from.plain()));
      life_ms = std::max(life_ms, pttl.reply.integer);
    }
  }
  for (const auto& [ledger, copy] : copies) {
    const auto& [args, life_ms] = copy;
    std::vector<Call> writes;
    for (std::size_t a = 0; a + 1 < args.size(); a += 2) {
      writes.push_back(Call::idempotent_write({"HSETNX", ledger, args[a], args[a + 1]}));
    }
    // The copy lives as long as its sources would have; a ledger that had an expiry keeps it.
    // Nothing else writes to it now, so the PTTL read after the copy is still true when the
    // PEXPIRE comes (and a crash in between leaves -1, which the next run finds).
    writes.push_back(Call::read({"PTTL", ledger}));
    const std::vector<CallResult> copied = client_.run(writes);
    const CallResult& last_copy = copied[copied.size() - 2];
    const CallResult& pttl = copied.back();
    const std::string step = fmt::format("copying the request ids into {} was", ledger);
    for (const CallResult& result : copied) {
      if (!split_reply_or_error(item, result)) return false;
    }
    if (!split_step_confirmed(item, last_copy, client_.options(), step)) return false;
    if (pttl.reply.integer == -1 && life_ms > 0) {
      const CallResult expiry =
          client_.run({Call::idempotent_write({"PEXPIRE", ledger, std::to_string(life_ms)})})[0];
      if (!split_reply_or_error(item, expiry) ||
          !split_step_confirmed(item, expiry, client_.options(), step)) {
        return false;
      }
    }
  }
  stop_split_if_asked("split:ledgers");
  return true;
}

bool SplitRunner::keep_bucket_log(ItemResult& item, const std::string& bucket) {
  const std::string list = log_key(bucket);
  const CallResult read = client_.run({Call::read({"LRANGE", list, "0", "-1"})})[0];
  if (!split_reply_or_error(item, read)) return false;
  if (read.reply.elements.empty()) return true;
  std::vector<std::string> entries;
  entries.reserve(read.reply.elements.size());
  for (const Reply& entry : read.reply.elements) entries.push_back(entry.str);
  const CallResult kept =
      client_.run({keep_bucket_log_call(item.key, bucket, entries, log_.max_entries)})[0];
  if (!split_reply_or_error(item, kept)) return false;
  return split_step_confirmed(item, kept, client_.options(),
                              fmt::format("keeping the change log of bucket {} was", bucket));
}

SplitRunner::Next SplitRunner::fill(ItemResult& item, const std::string& stored,
                                    const SplitRecord& record) {
  if (!carry_ledgers(item, record)) return Next::stop;
  // The old layout's drained buckets: their units are in the record now.
  for (int i = 0; i < record.from.buckets(); ++i) {
    const std::string key = bucket_key(item.key, record.from, i);
    if (!keep_bucket_log(item, key)) return Next::stop;
    stop_split_if_asked(fmt::format("split:keep-log:{}", i));
    const std::vector<CallResult> results =
        client_.run({Call::idempotent_write({"DEL", key, log_key(key), bucket_moves_key(key),
                                             bucket_short_key(key), bucket_adds_key(key)})});
    if (!split_reply_or_error(item, results[0])) return Next::stop;
    if (!split_step_confirmed(item, results[0], client_.options(),
                              fmt::format("deleting bucket {} was", key))) {
      return Next::stop;
    }
    stop_split_if_asked(fmt::format("split:delete:{}", i));
  }
  // The new buckets (none for a merge): SET NX, so that a second try finds what the first one
  // created.
  const std::vector<std::int64_t> shares =
      record.target.plain() ? std::vector<std::int64_t>{}
                            : bucket_shares(record.units, record.target.buckets());
  for (int i = 0; i < record.target.buckets(); ++i) {
    const std::string key = bucket_key(item.key, record.target, i);
    const std::vector<CallResult> results = client_.run({Call::idempotent_write(
        {"SET", key, std::to_string(shares[static_cast<std::size_t>(i)]), "NX"})});
    if (!split_reply_or_error(item, results[0])) return Next::stop;
    if (!split_step_confirmed(item, results[0], client_.options(),
                              fmt::format("creating bucket {} was", key))) {
      return Next::stop;
    }
    stop_split_if_asked(fmt::format("split:fill:{}", i));
  }
  return item_step(item, "commit", stored, record.target, 0, "split:commit");
}

}  // namespace stockctl
