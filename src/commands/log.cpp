// `log SKU`: an item's change log, oldest entry first.

#include <fmt/format.h>

#include <algorithm>

#include "app/context.h"
#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "commands/program.h"
#include "core/change_log.h"
#include "core/sku.h"

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

nlohmann::ordered_json entry_json(const std::string& sku, const std::string& key,
                                  const LogEntry& e) {
  nlohmann::ordered_json j;
  j["op"] = "log";
  j["sku"] = sku;
  j["key"] = key;
  j["entry"] = e.id;
  j["time_ms"] = e.time_ms;
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

// XRANGE/XREVRANGE answer: [[id, [field, value, ...]], ...].
std::vector<LogEntry> entries_of(const Reply& reply, const std::string& log) {
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

Reply read_call(Client& client, std::vector<std::string> argv) {
  return client.call(Call::read(std::move(argv)));
}

// Prints the entries from `start` on, oldest first, a page at a time; returns how many.
std::size_t print_all(Context& ctx, const LogOptions& o, const std::string& key,
                      const std::string& log, std::string start) {
  std::size_t printed = 0;
  for (;;) {
    std::vector<LogEntry> page = entries_of(
        read_call(ctx.redis(), {"XRANGE", log, start, "+", "COUNT", std::to_string(kPage)}), log);
    for (const LogEntry& e : page) ctx.out().write(entry_json(o.sku, key, e));
    printed += page.size();
    stop_if_interrupted();
    if (static_cast<long long>(page.size()) < kPage) return printed;
    start = "(" + page.back().id;
  }
}

// The newest `limit` entries from `start` on, printed oldest first.
std::size_t print_newest(Context& ctx, const LogOptions& o, const std::string& key,
                         const std::string& log, const std::string& start) {
  std::vector<LogEntry> page = entries_of(
      read_call(ctx.redis(), {"XREVRANGE", log, "+", start, "COUNT", std::to_string(o.limit)}),
      log);
  std::reverse(page.begin(), page.end());
  for (const LogEntry& e : page) ctx.out().write(entry_json(o.sku, key, e));
  return page.size();
}

ExitCode run_log(Program& program, const LogOptions& o) {
  Context ctx(program);
  if (std::string problem = validate_sku(o.sku, ctx.scheme()); !problem.empty()) {
    throw InputError(fmt::format("item '{}': {}", o.sku, problem));
  }
  std::string start = "-";
  if (!o.since.empty()) {
    std::string error;
    auto ms = parse_log_time(o.since, error);
    if (!ms) throw InputError(fmt::format("--since '{}': {}", o.since, error));
    start = std::to_string(*ms);
  }
  const std::string key = stock_key(ctx.scheme(), o.sku);
  const std::string log = log_key(key);
  const std::size_t printed =
      o.limit > 0 ? print_newest(ctx, o, key, log, start) : print_all(ctx, o, key, log, start);
  if (printed > 0) return ExitCode::ok;
  // Nothing to show: say so only when the item itself does not exist either.
  // One EXISTS per key: each follows ASK at once while the item's slot migrates, where one
  // EXISTS of both would be refused with TRYAGAIN until the migration ends.
  for (const std::string& k : {key, log}) {
    Reply exists = read_call(ctx.redis(), {"EXISTS", k});
    if (exists.is_error()) throw StockctlError(fmt::format("{}: {}", k, exists.str));
    if (exists.integer > 0) return ExitCode::ok;
  }
  nlohmann::ordered_json j;
  j["op"] = "log";
  j["sku"] = o.sku;
  j["key"] = key;
  j["status"] = "missing";
  ctx.out().write(j);
  return ExitCode::uninitialized;
}

}  // namespace

void setup_log(CLI::App& app, Program& program) {
  auto o = std::make_shared<LogOptions>();
  CLI::App* sub = app.add_subcommand(
      "log", "show an item's change log: who changed it, when, how and why (oldest first)");
  sub->add_option("SKU", o->sku, "item id")->required();
  sub->add_option("--limit", o->limit, "only the newest N entries")
      ->check(CLI::Range(1LL, 1LL << 40).description(""));
  sub->add_option("--since", o->since,
                  "only entries from TIME on: ISO 8601 (2026-11-30T21:00:00Z) or epoch ms");
  add_common_footer(*sub);
  sub->callback([&program, o] { program.run = [&program, o] { return run_log(program, *o); }; });
}

}  // namespace stockctl
