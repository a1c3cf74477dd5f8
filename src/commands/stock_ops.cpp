#include "commands/stock_ops.h"

#include <fmt/format.h>

#include "cli/errors.h"
#include "commands/durability.h"
#include "core/quantity.h"
#include "proc/init_cmd.h"
#include "redis/errors.h"
#include "scripts/registry.h"
#include "sources/open_source.h"

namespace stockctl {
namespace {

// The init command must finish a little before the lock expires, so that the key is created
// while the lock is still ours.
constexpr auto kLockMargin = std::chrono::milliseconds(200);

std::optional<Format> format_option(const std::string& name) {
  if (name.empty()) return std::nullopt;
  return parse_format(name);
}

ParsedNumber stock_from_file(const InitSource& init, const std::string& sku,
                             const KeyScheme& scheme) {
  Source source(init.file, format_option(init.format));
  ParsedNumber found{0, fmt::format("--init-from {}: no row for item '{}'", source.name(), sku)};
  WantedColumns wanted = stock_columns(init.columns);
  RecordHandler handler{
      [&](const std::vector<bool>& present) { return check_stock_header(present, init.columns); },
      [&](Record& record) {
        if (record.fatal) {
          found.error =
              fmt::format("--init-from {}:{}: {}", source.name(), record.line, record.error);
          return false;
        }
        StockRow row;
        std::string problem = interpret_stock_row(record, init.columns, scheme, row);
        if (row.sku != sku) return true;
        found = problem.empty() ? ParsedNumber{row.value, {}}
                                : ParsedNumber{0, fmt::format("--init-from {}:{}: {}",
                                                              source.name(), record.line, problem)};
        return false;
      }};
  source.read(wanted, handler);
  return found;
}

}  // namespace

void add_op_options(CLI::App& app, OpOptions& o) {
  const char* init = "Initialization of a missing key";
  app.add_option("--init-value", o.init.value, "initial stock of a missing key (or unlimited)")
      ->group(init);
  app.add_option("--init-from", o.init.file,
                 "take a missing key's initial stock from its row in FILE")
      ->group(init);
  app.add_option("--init-cmd", o.init.command,
                 "run CMD (sh -c, SKU in $STOCKCTL_SKU) under the init lock; its output is the "
                 "initial stock")
      ->group(init);
  app.add_option("--request-id", o.request_id,
                 "apply at most once per item and ID; a repeat returns the first answer")
      ->group("Retries");
  app.add_option("--request-ttl", o.request_ttl_s,
                 "how long a request id is remembered, in seconds (default 86400)")
      ->check(CLI::Range(1LL, 1LL << 32).description(""))
      ->group("Retries");
  app.add_option("--ttl", o.ttl_s, "expiry in seconds of keys this call creates (default none)")
      ->check(CLI::Range(0LL, 1LL << 40).description(""))
      ->group(init);
  app.add_option("--lock-ttl", o.lock.ttl_ms, "init lock lifetime in ms (default 10000)")
      ->check(CLI::Range(1LL, 86400000LL).description(""))
      ->group(init);
  app.add_option("--lock-wait", o.lock.wait_ms,
                 "longest wait for the init lock in ms (default 5000)")
      ->check(CLI::Range(0LL, 86400000LL).description(""))
      ->group(init);
}

void validate_init_source(const InitSource& init) {
  int given = !init.value.empty() + !init.file.empty() + !init.command.empty();
  if (given > 1) {
    throw InputError("give at most one of --init-value, --init-from and --init-cmd");
  }
  if (!init.value.empty()) {
    ParsedNumber n = parse_stock_value(init.value);
    if (!n.ok()) throw InputError(fmt::format("--init-value: {}", n.error));
  }
}

OpRunner::OpRunner(Client& client, Op op, const OpOptions& options, const KeyScheme& scheme)
    : client_(client), op_(op), options_(options), scheme_(scheme) {}

Call OpRunner::call_for(const ItemResult& item, const std::string& init) const {
  // Only the keys this call needs: the stock key alone follows ASK at once while its slot
  // migrates, like any single-key command.
  Call call{&stock_script(), {item.key}, !item.request_id.empty(), true};
  std::vector<std::string>& args = call.args;
  args.reserve(13);
  if (!item.request_id.empty()) {
    args.push_back(companion_key(item.key, std::string(kRequestSuffix) + item.request_id));
  }
  if (log_.enabled) args.push_back(log_key(item.key));
  call.keys = static_cast<int>(args.size());
  args.insert(args.end(), {op_ == Op::deduct ? "deduct" : "add", std::to_string(*item.qty), init,
                           std::to_string(options_.ttl_s), item.request_id,
                           std::to_string(options_.request_ttl_s)});
  if (log_.enabled) {
    args.insert(args.end(), {std::to_string(log_.max_entries), log_.actor, log_.reason});
  }
  return call;
}

void OpRunner::apply(ItemResult& item, const CallResult& result) const {
  if (result.state != CallResult::State::replied) {
    set_error(item, Status::error, result.error);
    item.stock.reset();
    return;
  }
  const Reply& r = result.reply;
  if (r.is_error()) return apply_error_reply(item, r.str);
  if (r.type != Reply::Type::array || r.elements.size() != 3 ||
      r.elements[0].type != Reply::Type::integer || r.elements[1].type != Reply::Type::integer) {
    return set_error(
        item, Status::error,
        fmt::format("unexpected reply from the {} script: {}", item.op, describe_reply(r)));
  }
  if (op_ == Op::deduct) {
    apply_deduct_answer(item, r.elements[0].integer, r.elements[1].integer);
  } else {
    apply_add_answer(item, r.elements[0].integer, r.elements[1].integer);
  }
  item.replayed = r.elements[2].integer == 1;
  if (item.status == Status::ok && !item.replayed)
    check_durability(item, result, client_.options());
}

void OpRunner::run(std::vector<ItemResult>& items) {
  start(items);
  finish(items);
}

void OpRunner::start(const std::vector<ItemResult>& items) {
  std::vector<Call> calls;
  calls.reserve(items.size());
  for (const ItemResult& item : items) {
    if (item.qty) calls.push_back(call_for(item, ""));
  }
  client_.start(std::move(calls));
}

void OpRunner::finish(std::vector<ItemResult>& items) {
  std::vector<CallResult> results = client_.finish();
  std::size_t next = 0;
  for (ItemResult& item : items) {
    if (item.qty) apply(item, results[next++]);
  }
  // Locks are taken only where a key is actually missing.
  for (ItemResult& item : items) {
    if (item.qty && item.status == Status::uninitialized && can_initialize()) initialize(item);
  }
}

void OpRunner::apply_once(ItemResult& item, const std::string& init) {
  std::vector<CallResult> results = client_.run({call_for(item, init)});
  apply(item, results[0]);
}

void OpRunner::initialize(ItemResult& item) {
  const std::string lock_key = companion_key(item.key, ":lock");
  const std::string token = random_token();
  try {
    // Between tries, run the operation again: another process may have created the key.
    LockWait wait = acquire_lock(client_, lock_key, token, options_.lock, [&] {
      apply_once(item, "");
      return item.status != Status::uninitialized;
    });
    if (wait == LockWait::resolved) return;
    if (wait == LockWait::timed_out) {
      set_error(item, Status::busy,
                fmt::format("init lock {} still held by another process after {} ms", lock_key,
                            options_.lock.wait_ms));
      return;
    }
    // Measured after SET NX returned, so slightly late; kLockMargin covers that round trip.
    auto lock_expiry =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.lock.ttl_ms);
    LockRelease release(client_, lock_key, token);
    initialize_locked(item, lock_expiry);
  } catch (const StockctlError& e) {
    set_error(item, Status::error, e.what());
    item.stock.reset();
  }
}

void OpRunner::initialize_locked(ItemResult& item,
                                 std::chrono::steady_clock::time_point lock_expiry) {
  // Double check under the lock: the key may have appeared between our miss and the lock.
  apply_once(item, "");
  if (item.status != Status::uninitialized) return;
  ParsedNumber init{0, {}};
  if (options_.init.given()) init = initial_stock(item.sku, lock_expiry - kLockMargin);
  if (!init.ok()) {
    set_error(item, Status::error, fmt::format("{}; nothing was created", init.error));
    return;
  }
  // The script creates the key only if it is still missing, then applies the operation.
  apply_once(item, std::to_string(init.value));
}

ParsedNumber OpRunner::initial_stock(const std::string& sku,
                                     std::chrono::steady_clock::time_point deadline) const {
  const InitSource& init = options_.init;
  if (!init.value.empty()) return parse_stock_value(init.value);
  if (!init.file.empty()) return stock_from_file(init, sku, scheme_);
  return run_init_cmd(init.command, sku, deadline);
}

}  // namespace stockctl
