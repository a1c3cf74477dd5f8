// confirm, release, cancel and reap on one Redis: each id is one settle script, reap one
// script a batch of items.

#include "holds/one_redis.h"

#include <fmt/format.h>

#include <unordered_set>

#include "base/diagnostics.h"
#include "base/text.h"
#include "bulk/replica_ack.h"
#include "core/error_reply.h"
#include "core/hold_lines.h"
#include "core/sku.h"
#include "holds/group_finish.h"
#include "holds/hold_runner.h"
#include "holds/settle_answer.h"
#include "redis/errors.h"
#include "redis/scripts/reap.h"
#include "redis/scripts/settle.h"

namespace stockctl {

Settled settle_on_one_redis(CartStore& store, const std::string& action, const std::string& id) {
  auto report = [](Status status, std::vector<RecordLine> lines,
                   std::vector<std::optional<std::int64_t>> stocks, bool replayed,
                   std::string error) {
    return Settled{status, std::move(lines), std::move(stocks), replayed, std::move(error), {}};
  };
  if (std::string problem = validate_hold_id(id); !problem.empty()) {
    return report(Status::invalid, {}, {}, false, problem);
  }
  const std::string record = hold_record_key(store.scheme, id);
  // A read or a settle left without an answer is this id's answer (the next ids still get
  // theirs): nothing was sent yet when the read got none.
  Reply text;
  try {
    text = store.client.call(Call::read({"GET", record}));
  } catch (const ConnectionError& e) {
    return report(Status::error, {}, {}, false, fmt::format("not applied: {}", e.what()));
  }
  if (text.is_nil()) return report(Status::missing, {}, {}, false, "");
  std::optional<std::vector<RecordLine>> lines;
  if (text.type == Reply::Type::string) {
    lines = hold_record_lines(text.str);
  } else if (text.error_kind() == ErrorReply::wrongtype) {
    // A record of the previous version: a hash whose field "lines" is JSON.
    text = store.client.call(Call::read({"HGET", record, "lines"}));
    if (text.type == Reply::Type::string) lines = record_lines(text.str);
  }
  if (!lines) {
    return report(Status::error, {}, {}, false,
                  fmt::format("{}: the record is not one stockctl wrote", record));
  }
  const Call settle =
      record_settle_call(store.log, record, holds_index_key(store.scheme), action, id, *lines);
  // A change log of another type (STOCKCTL_LOG_LOST): the settle was made whole and the line
  // says so; the same id answers it again. (Sending it again here would read a replay that
  // lost what the first answer said, a removed line's name.)
  std::vector<CallResult> results = store.client.run({settle});
  if (results[0].state != CallResult::State::replied) {
    return report(Status::error, *lines, {}, false, results[0].error);  // says what became of it
  }
  const Reply& r = results[0].reply;
  if (r.is_error()) {
    ItemResult item;
    item.key = record;
    item.op = action;
    std::string reply = r.str;
    // settle-4002.lua names the line whose stored value is corrupt: the error names its item.
    if (std::optional<CorruptLine> bad = corrupt_line(r.str); bad && bad->index < lines->size()) {
      item.key = (*lines)[bad->index].key;
      item.sku = (*lines)[bad->index].sku;
      reply = bad->reply;
    }
    apply_error_reply(item, reply);
    // Each line's stock now, as a refused answer gives it (one that is not a stock value, null).
    std::vector<std::optional<std::int64_t>> stocks(lines->size());
    read_missing_stocks(store.client, *lines, stocks);
    return report(item.status, *lines, stocks, false, error_naming_item(item));
  }
  const std::optional<SettleReply> settled = parse_settle_reply(r);
  if (!settled || settled->stocks.size() != lines->size()) {
    return report(Status::error, *lines, {}, false,
                  fmt::format("unexpected reply from the settle script: {}", describe_reply(r)));
  }
  std::vector<std::optional<std::int64_t>> stocks;
  for (std::int64_t s : settled->stocks) {
    stocks.push_back(s >= 0 ? std::optional<std::int64_t>(s) : std::nullopt);
  }
  Status status = settle_status(settled->status);
  std::string error = settle_conflict(action, settled->status);
  if (settled->status == "removed" && settled->removed_line < lines->size()) {
    error = removed_line_error((*lines)[settled->removed_line]);
  }
  if (status == Status::ok && !acknowledged(results[0], store.client.options())) {
    status = Status::error;
    error = unacknowledged(results[0], store.client.options());
  }
  if (status == Status::missing) lines->clear();
  Settled answer = report(status, *lines, stocks, settled->replayed, error);
  if (action != "confirm" && status == Status::ok && !settled->replayed) {
    for (std::size_t i = 0; i < settled->stocks.size(); ++i) {
      if (settled->stocks[i] == kStockMissing) answer.nowhere.push_back(i);
    }
  }
  return answer;
}

Reaped reap_on_one_redis(CartStore& store) {
  const ChangeLogSettings& log = store.log;
  Reaped total;
  // A hold of several lines expires on each of its items, perhaps in different calls: each
  // call names the ids it gave back, and every id counts once.
  std::unordered_set<std::string> expired;
  for (bool more = true; more;) {
    const Reply r = store.client.call(reap_call(holds_index_key(store.scheme), kReapBatch, log));
    if (r.is_error() && r.error_kind() == ErrorReply::stockctl_log_lost) {
      // That call gave back what it found, whole, but its answer (what and how much) is lost
      // with its log entry; the next call goes on with the items after them.
      total.unfinished.push_back(
          fmt::format("a batch of expired holds was given back, not counted here: {}",
                      log_lost_warning(lost_log_key(r.str))));
      continue;
    }
    const std::optional<ReapReply> reaped = parse_reap_reply(r);
    if (!reaped) {
      throw StockctlError(fmt::format("reap: unexpected reply: {}", describe_reply(r)));
    }
    total.units += reaped->units;
    more = reaped->more;
    expired.insert(reaped->ids.begin(), reaped->ids.end());
    for (const auto& [key, units] : reaped->nowhere) {
      total.units -= units;
      total.nowhere.push_back(RecordLine{sku_of_key(store.scheme, key).value_or(key), key, units});
    }
    for (const std::string& key : reaped->kept) {
      total.kept.push_back(RecordLine{sku_of_key(store.scheme, key).value_or(key), key, 0});
    }
  }
  total.holds = static_cast<std::int64_t>(expired.size());
  return total;
}

}  // namespace stockctl
