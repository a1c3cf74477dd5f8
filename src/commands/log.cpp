// `log SKU`: an item's change log, oldest entry first: the stream of earlier versions, then
// its list with its first entry (its own key, or an earlier version's slot hash) placed by its
// time (lua/include/log_entry.lua).

#include <fmt/format.h>

#include <algorithm>

#include <iterator>
#include <optional>

#include "app/context.h"
#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "cli/common_options.h"
#include "commands/program.h"
#include "core/change_log.h"
#include "core/error_reply.h"
#include "core/sku.h"
#include "core/split_layout.h"
#include "core/split_plan.h"

namespace stockctl {
namespace {

struct LogOptions {
  std::string sku;
  long long limit = 0;  ///< 0 = every entry
  std::string since;
};

constexpr long long kPage = 1000;

nlohmann::ordered_json nullable(const std::optional<std::int64_t>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json nullable(const std::optional<std::string>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// One entry as JSON; for --table with its time as ISO 8601 UTC ("time") instead of epoch ms,
// for a person reading it.
nlohmann::ordered_json entry_json(const std::string& sku, const std::string& key, const LogEntry& e,
                                  bool iso_time) {
  nlohmann::ordered_json j;
  j["op"] = "log";
  j["sku"] = sku;
  j["key"] = key;
  j["entry"] = e.id;
  if (iso_time) {
    j["time"] = format_log_time(e.time_ms);
  } else {
    j["time_ms"] = e.time_ms;
  }
  j["change"] = e.change;
  j["qty"] = nullable(e.qty);
  j["before"] = nullable(e.before);
  j["after"] = nullable(e.after);
  j["request_id"] = nullable(e.request_id);
  j["hold_id"] = nullable(e.hold_id);
  j["actor"] = nullable(e.actor);
  j["reason"] = nullable(e.reason);
  return j;
}

// XRANGE answer: [[id, [field, value, ...]], ...].
std::vector<LogEntry> stream_entries(const Reply& reply, const std::string& log) {
  if (reply.is_error()) throw StockctlError(fmt::format("{}: {}", log, reply.str));
  std::vector<LogEntry> entries;
  for (const Reply& item : reply.elements) {
    if (item.elements.size() != 2) continue;
    StreamFields fields;
    const auto& flat = item.elements[1].elements;
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
      fields.emplace_back(flat[i].str, flat[i + 1].str);
    }
    entries.push_back(parse_log_entry(item.elements[0].str, fields));
  }
  return entries;
}

// A read of `key`; an error reply ends the run naming the key, and for an ACL refusal what the
// user lacks: the log reads stockctl:log:{<tag>} too, outside the items' prefix.
Reply read_call(Context& ctx, std::vector<std::string> argv, const std::string& key) {
  Reply reply = ctx.redis().call(Call::read(std::move(argv)));
  if (reply.is_error()) throw StockctlError(error_on(key, reply.str, ctx.scheme().prefix));
  return reply;
}

// What the log holds from `since` on, oldest first, and whether any log key exists at all.
struct ItemLog {
  std::vector<LogEntry> entries;
  bool first_entry = false;  ///< the item has a first entry (its first key, or its slot's hash)
};

void keep(std::vector<LogEntry>& out, LogEntry e, std::int64_t since) {
  if (e.time_ms >= since) out.push_back(std::move(e));
}

// The stream that versions before the list wrote, a page at a time: its entries are older
// than any the list holds.
void read_stream(Context& ctx, const std::string& key, std::int64_t since, ItemLog& log) {
  const std::string stream = stream_log_key(key);
  std::string start = std::to_string(since);
  for (;;) {
    std::vector<LogEntry> page = stream_entries(
        read_call(ctx, {"XRANGE", stream, start, "+", "COUNT", std::to_string(kPage)}, stream),
        stream);
    for (LogEntry& e : page) log.entries.push_back(std::move(e));
    stop_if_interrupted();
    if (static_cast<long long>(page.size()) < kPage) return;
    start = "(" + log.entries.back().id;
  }
}

// The newest `count` entries of the stream from `since` on, oldest first, before the rest.
void read_stream_tail(Context& ctx, const std::string& key, std::int64_t since, long long count,
                      ItemLog& log) {
  const std::string stream = stream_log_key(key);
  std::vector<LogEntry> newest = stream_entries(
      read_call(ctx,
                {"XREVRANGE", stream, "+", std::to_string(since), "COUNT", std::to_string(count)},
                stream),
      stream);
  log.entries.insert(log.entries.begin(), std::make_move_iterator(newest.rbegin()),
                     std::make_move_iterator(newest.rend()));
}

// The entries a load wrote outside the item's list (lua/include/log_entry.lua): in its first
// key, and where earlier versions put it, in its slot's hash. Each is kept only from `since`.
std::vector<LogEntry> read_first_entries(Context& ctx, const std::string& key, std::int64_t since,
                                         ItemLog& log) {
  const std::string first_key = first_log_key(key);
  const std::string slot_log = slot_log_key(key);
  // The first key may be another item's stock key, or another type (WRONGTYPE), where an earlier
  // version let an item be named "<id>:first" (delete.cpp, own_late_companions): only a first
  // entry counts.
  const Reply own = ctx.redis().call(Call::read({"GET", first_key}));
  const Reply old = read_call(ctx, {"HGET", slot_log, key}, slot_log);
  std::vector<LogEntry> found;
  for (std::optional<LogEntry> e :
       {own.type == Reply::Type::string ? parse_first_log_entry(own.str) : std::nullopt,
        old.type == Reply::Type::string ? parse_packed_log_entry(old.str) : std::nullopt}) {
    if (!e) continue;
    log.first_entry = true;
    if (e->time_ms >= since) found.push_back(std::move(*e));
  }
  return found;
}

void keep_list_entries(const Reply& page, std::int64_t since, ItemLog& log) {
  for (const Reply& item : page.elements) {
    if (auto e = parse_packed_log_entry(item.str)) keep(log.entries, std::move(*e), since);
  }
}

// The item's list, a page at a time, with its first entries placed by their time.
void read_packed(Context& ctx, const std::string& key, std::int64_t since, ItemLog& log) {
  std::vector<LogEntry> first = read_first_entries(ctx, key, since, log);
  const std::string list = log_key(key);
  for (long long at = 0;; at += kPage) {
    Reply page =
        read_call(ctx, {"LRANGE", list, std::to_string(at), std::to_string(at + kPage - 1)}, list);
    keep_list_entries(page, since, log);
    stop_if_interrupted();
    if (static_cast<long long>(page.elements.size()) < kPage) break;
  }
  for (LogEntry& e : first) place_first_entry(log.entries, std::move(e));
}

// The newest `limit` entries: the tail of the list, the first entries, and the stream's
// newest only when those are fewer. Reading the whole log to print its end would cost a log of
// --log-max entries as many round trips and bytes for every `log --limit 1`.
void read_newest(Context& ctx, const std::string& key, std::int64_t since, long long limit,
                 ItemLog& log) {
  std::vector<LogEntry> first = read_first_entries(ctx, key, since, log);
  const std::string list = log_key(key);
  keep_list_entries(read_call(ctx, {"LRANGE", list, std::to_string(-limit), "-1"}, list), since,
                    log);
  for (LogEntry& e : first) place_first_entry(log.entries, std::move(e));
  const auto have = static_cast<long long>(log.entries.size());
  if (have < limit) read_stream_tail(ctx, key, since, limit - have, log);
}

// The keys whose logs make the item's: its stock key, then its buckets (a split item).
std::vector<std::string> with_buckets(const std::string& key,
                                      const std::vector<std::string>& buckets) {
  std::vector<std::string> keys{key};
  keys.insert(keys.end(), buckets.begin(), buckets.end());
  return keys;
}

// The line of an item that has no entries to show: missing, or error with the reason.
nlohmann::ordered_json log_status_json(const std::string& sku, const std::string& key,
                                       Status status, const std::string& error) {
  nlohmann::ordered_json j;
  j["op"] = "log";
  j["sku"] = sku;
  j["key"] = key;
  j["status"] = std::string(status_name(status));
  if (!error.empty()) j["error"] = error;
  return j;
}

// Everything the log of the item at `key` shows: its own entries and its buckets', oldest
// first. A split item's deductions and additions are in its buckets' logs (docs/split.md): those
// of the live layout are read too, and every entry placed by its time. A layout being replaced
// is refused rather than shown in part. Throws StockctlError (ConnectionError) when a read fails.
ItemLog read_item_log(Context& ctx, const LogOptions& o, const std::string& key,
                      std::int64_t since) {
  const Reply value = read_call(ctx, {"GET", key}, key);
  std::vector<std::string> buckets;
  if (value.type == Reply::Type::string && is_split_record(value.str)) {
    const std::optional<SplitRecord> record = parse_split_record(value.str);
    if (!record || record->state != SplitState::live) {
      throw StockctlError(split_item_refused("log", o.sku, value.str));
    }
    buckets = bucket_keys(key, record->target);
  }
  ItemLog log;
  const std::vector<std::string> logs = with_buckets(key, buckets);
  for (std::size_t b = 0; b < logs.size(); ++b) {
    const std::string& logged = logs[b];
    ItemLog one;
    if (o.limit > 0 && o.limit <= kPage) {
      read_newest(ctx, logged, since, o.limit, one);
    } else {
      read_stream(ctx, logged, since, one);
      read_packed(ctx, logged, since, one);
    }
    log.first_entry = log.first_entry || one.first_entry;
    // Each bucket numbers its own entries: an entry of bucket i says so in its id, which stays
    // unique for the item ("<ms>-<n>.b<i>").
    if (b > 0) {
      for (LogEntry& e : one.entries) e.id += fmt::format(".b{}", b - 1);
    }
    log.entries.insert(log.entries.end(), std::make_move_iterator(one.entries.begin()),
                       std::make_move_iterator(one.entries.end()));
  }
  if (!buckets.empty()) {
    std::stable_sort(log.entries.begin(), log.entries.end(),
                     [](const LogEntry& a, const LogEntry& b) { return a.time_ms < b.time_ms; });
  }
  return log;
}

// Whether the item at `key` exists though its log shows nothing. One EXISTS per key: each
// follows ASK at once while the item's slot migrates, where one EXISTS of several would be
// refused with TRYAGAIN until the migration ends.
bool item_exists(Context& ctx, const std::string& key) {
  for (const std::string& k : {key, log_key(key), stream_log_key(key)}) {
    if (read_call(ctx, {"EXISTS", k}, k).integer > 0) return true;
  }
  return false;
}

// What `read` returns; when it fails, the item's line says why (as every item command's does
// when it cannot answer) before the error ends the run.
template <typename Read>
auto or_error_line(Context& ctx, const std::string& sku, const std::string& key, Read read) {
  try {
    return read();
  } catch (const InterruptedError&) {
    throw;
  } catch (const StockctlError& e) {
    ctx.out().write(log_status_json(sku, key, Status::error, e.what()));
    throw;
  }
}

ExitCode run_log(Program& program, LogOptions& o) {
  Context ctx(program);
  if (std::string problem = accept_sku(o.sku, ctx.scheme()); !problem.empty()) {
    throw InputError(fmt::format("item '{}': {}", o.sku, problem));
  }
  std::int64_t since = 0;
  if (!o.since.empty()) {
    std::string error;
    auto ms = parse_log_time(o.since, error);
    if (!ms) throw InputError(fmt::format("--since '{}': {}", o.since, error));
    since = *ms;
  }
  const std::string key = stock_key(ctx.scheme(), o.sku);
  ctx.on_unconnected([&ctx, &o, &key](const std::string& reason) {
    ctx.out().write(log_status_json(o.sku, key, Status::error, reason));
  });
  ctx.redis();  // connects first: when it cannot, on_unconnected has printed the item's line
  const ItemLog log =
      or_error_line(ctx, o.sku, key, [&] { return read_item_log(ctx, o, key, since); });
  std::size_t from = 0;
  if (o.limit > 0 && log.entries.size() > static_cast<std::size_t>(o.limit)) {
    from = log.entries.size() - static_cast<std::size_t>(o.limit);
  }
  for (std::size_t i = from; i < log.entries.size(); ++i) {
    ctx.out().write(entry_json(o.sku, key, log.entries[i], ctx.out().table()));
  }
  if (!log.entries.empty() || log.first_entry) return ExitCode::ok;
  // Nothing to show: say so only when the item itself does not exist either.
  if (or_error_line(ctx, o.sku, key, [&] { return item_exists(ctx, key); })) return ExitCode::ok;
  ctx.out().write(log_status_json(o.sku, key, Status::missing, ""));
  return ExitCode::uninitialized;
}

}  // namespace

void setup_log(CLI::App& app, Program& program) {
  auto o = std::make_shared<LogOptions>();
  CLI::App* sub = app.add_subcommand(
      "log", "show an item's change log: who changed it, when, how and why (oldest first)");
  sub->add_option("SKU", o->sku, "item id")->required();
  sub->add_option("--limit", o->limit, "only the newest N entries")
      ->check(integer_range(1, 1LL << 40));
  sub->add_option("--since", o->since,
                  "only entries from TIME on: ISO 8601 (2026-11-30T21:00:00Z) or epoch ms")
      // An unset $SINCE must not read as "everything".
      ->check(refuse_empty("'' is no time: give ISO 8601 or epoch milliseconds"));
  add_common_footer(*sub);
  sub->callback([&program, o] { program.run = [&program, o] { return run_log(program, *o); }; });
}

}  // namespace stockctl
