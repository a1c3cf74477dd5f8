// `hold`, `order`, `confirm`, `release`, `cancel`, `reap`: carts and reservations that are
// all-or-nothing over their lines, once per id, expiring by the server's clock.

#include "commands/holds.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/context.h"
#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/text.h"
#include "bulk/adjust_runner.h"
#include "commands/program.h"
#include "core/hold_lines.h"
#include "core/sku.h"
#include "redis/errors.h"
#include "redis/scripts/registry.h"
#include "sources/open_source.h"
#include "sources/rows.h"

namespace stockctl {

Call held_call(const std::string& stock_key) {
  return Call{&held_script(),
              {companion_key(stock_key, kHoldsSuffix), companion_key(stock_key, kHeldSuffix)},
              true};
}

std::optional<std::int64_t> held_from(const CallResult& result) {
  if (result.state != CallResult::State::replied || result.reply.type != Reply::Type::integer) {
    return std::nullopt;
  }
  return result.reply.integer;
}

std::int64_t held_units(Client& client, const std::string& stock_key) {
  Reply reply = client.call(held_call(stock_key));
  if (reply.type != Reply::Type::integer) {
    throw ConnectionError(fmt::format("{}: cannot read its holds: {}", stock_key,
                                      reply.is_error() ? reply.str : describe_reply(reply)));
  }
  return reply.integer;
}

namespace {

/// How long a hold lasts at most: a week (longer would be a reservation, not a hold).
constexpr long long kMaxExpireS = 7LL * 24 * 3600;
/// Holds a reap call gives back at most per script run, so that one run stays short.
constexpr int kReapBatch = 200;
/// Holds or orders from --file sent per pipelined window.
constexpr std::size_t kHoldWindow = 64;

enum class Kind { hold, order };

struct HoldOptions {
  std::string id;
  bool id_given = false;           ///< even as '' (an unset variable), which is invalid
  std::vector<std::string> lines;  ///< SKU=QTY as typed
  SourceOptions source;
  InitSource init;
  LockTiming lock;
  long long expire_s = 600;
  long long request_ttl_s = 86400;
  long long ttl_s = 0;
};

/// One hold or order and what became of it.
struct Cart {
  std::string id;
  std::vector<HoldLine> lines;  ///< merged, ordered by SKU
  std::vector<std::string> keys;
  std::vector<Status> line_status;
  std::vector<std::optional<std::int64_t>> stock;
  Status status = Status::ok;
  std::optional<std::int64_t> expires_at_ms;
  bool replayed = false;
  std::string error;
};

const char* kind_name(Kind kind) { return kind == Kind::hold ? "hold" : "order"; }

nlohmann::ordered_json cart_json(Kind kind, const Cart& cart) {
  nlohmann::ordered_json j;
  j["op"] = kind_name(kind);
  j["id"] = cart.id;
  j["status"] = status_name(cart.status);
  if (kind == Kind::hold) {
    j["expires_at_ms"] = cart.status == Status::ok && cart.expires_at_ms
                             ? nlohmann::ordered_json(*cart.expires_at_ms)
                             : nlohmann::ordered_json(nullptr);
  }
  nlohmann::ordered_json lines = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < cart.lines.size(); ++i) {
    nlohmann::ordered_json line;
    line["sku"] = cart.lines[i].sku;
    line["key"] = i < cart.keys.size() ? nlohmann::ordered_json(cart.keys[i]) : nullptr;
    line["qty"] = cart.lines[i].qty;
    if (i < cart.line_status.size()) {
      line["status"] = status_name(cart.line_status[i]);
      line["stock"] = cart.stock[i] ? nlohmann::ordered_json(*cart.stock[i]) : nullptr;
    }
    lines.push_back(std::move(line));
  }
  j["lines"] = std::move(lines);
  if (cart.replayed) j["replayed"] = true;
  if (!cart.error.empty()) j["error"] = cart.error;
  return j;
}

void fail(Cart& cart, Status status, std::string why) {
  cart.status = status;
  cart.error = std::move(why);
}

// Validates the id and the lines, merges them and sets the keys; on a problem the cart is
// invalid and nothing will be sent.
void prepare(Cart& cart, const KeyScheme& scheme) {
  if (std::string problem = validate_hold_id(cart.id); !problem.empty()) {
    return fail(cart, Status::invalid, problem);
  }
  if (cart.lines.empty()) return fail(cart, Status::invalid, "no lines (SKU=QTY)");
  if (cart.lines.size() > kMaxHoldLines) {
    return fail(cart, Status::invalid,
                fmt::format("{} lines; at most {} per id", cart.lines.size(), kMaxHoldLines));
  }
  for (const HoldLine& line : cart.lines) {
    if (std::string problem = validate_sku(line.sku, scheme); !problem.empty()) {
      return fail(cart, Status::invalid, fmt::format("item '{}': {}", line.sku, problem));
    }
  }
  if (std::string problem = merge_hold_lines(cart.lines); !problem.empty()) {
    return fail(cart, Status::invalid, problem);
  }
  for (const HoldLine& line : cart.lines) cart.keys.push_back(stock_key(scheme, line.sku));
}

/// The per-line keys every hold script takes: stock, holds, held units, [log].
void append_line_keys(std::vector<std::string>& keys, const std::string& stock, bool log) {
  keys.push_back(stock);
  keys.push_back(companion_key(stock, kHoldsSuffix));
  keys.push_back(companion_key(stock, kHeldSuffix));
  if (log) keys.push_back(log_key(stock));
}

class HoldRunner {
 public:
  HoldRunner(Context& ctx, Kind kind, const HoldOptions& o)
      : ctx_(ctx), kind_(kind), o_(o), initial_(o.init, ctx.scheme()) {}

  /// Holds or orders each prepared cart (invalid ones are left as they are).
  void run(std::vector<Cart>& carts) {
    std::vector<Call> calls;
    std::vector<Cart*> sent;
    for (Cart& cart : carts) {
      if (cart.status != Status::ok) continue;
      calls.push_back(call_for(cart, {}));
      sent.push_back(&cart);
    }
    std::vector<CallResult> results = ctx_.redis().run(calls);
    for (std::size_t i = 0; i < sent.size(); ++i) {
      apply(*sent[i], results[i]);
      if (sent[i]->status == Status::uninitialized && o_.init.given()) initialize(*sent[i]);
    }
  }

 private:
  Call call_for(const Cart& cart, const std::vector<std::string>& inits) const {
    const ChangeLogSettings& log = ctx_.change_log();
    Call call{&hold_script(), {}, true, true};
    call.args = {hold_record_key(ctx_.scheme(), cart.id), holds_index_key(ctx_.scheme())};
    for (const std::string& key : cart.keys) append_line_keys(call.args, key, log.enabled);
    call.numkeys = static_cast<int>(call.args.size());
    call.args.insert(call.args.end(),
                     {kind_name(kind_), cart.id, std::to_string(o_.expire_s * 1000),
                      std::to_string(o_.request_ttl_s), std::to_string(o_.ttl_s),
                      log.enabled ? std::to_string(log.max_entries) : "", log.actor, log.reason,
                      log.enabled ? "4" : "3"});
    for (std::size_t i = 0; i < cart.lines.size(); ++i) {
      call.args.push_back(cart.lines[i].sku);
      call.args.push_back(std::to_string(cart.lines[i].qty));
      call.args.push_back(inits.empty() ? "" : inits[i]);
    }
    return call;
  }

  void apply(Cart& cart, const CallResult& result) const {
    cart.error.clear();
    if (result.state != CallResult::State::replied) return fail(cart, Status::error, result.error);
    const Reply& r = result.reply;
    if (r.is_error()) return apply_error(cart, r.str);
    const std::size_t n = cart.lines.size();
    if (r.type != Reply::Type::array || r.elements.size() != 2 + 2 * n) {
      return fail(cart, Status::error,
                  fmt::format("unexpected reply from the hold script: {}", describe_reply(r)));
    }
    cart.replayed = r.elements[0].integer == 1;
    cart.expires_at_ms = r.elements[1].integer;
    cart.line_status.assign(n, Status::ok);
    cart.stock.assign(n, std::nullopt);
    ExitFold fold;
    for (std::size_t i = 0; i < n; ++i) {
      ItemResult line;
      apply_deduct_answer(line, r.elements[2 + 2 * i].integer, r.elements[3 + 2 * i].integer);
      cart.line_status[i] = line.status;
      cart.stock[i] = line.stock;
      fold.add(line.status);
    }
    cart.status = Status::ok;
    // The cart takes the status of its most serious short line (uninitialized before
    // insufficient, as the exit statuses rank them).
    for (std::size_t i = 0; i < n; ++i) {
      if (exit_code_for(cart.line_status[i]) == fold.code() && fold.code() != ExitCode::ok) {
        cart.status = cart.line_status[i];
        break;
      }
    }
  }

  void apply_error(Cart& cart, const std::string& text) const {
    if (text.rfind("STOCKCTL_CONFLICT", 0) == 0) {
      return fail(
          cart, Status::conflict,
          fmt::format("id '{}' was already used with other lines (or for a {} of "
                      "the other kind); nothing changed",
                      escape_control(cart.id), text.substr(18) == "hold" ? "order" : "hold"));
    }
    ItemResult item;
    item.key = hold_record_key(ctx_.scheme(), cart.id);
    apply_error_reply(item, text);
    fail(cart, item.status, item.error);
  }

  // The init lock protocol of deduct, for every line whose key is missing: the locks are taken
  // in the lines' order (by SKU, the same in every process, so two carts never wait on each
  // other), then the cart is sent again with the initial stock of each line still missing.
  void initialize(Cart& cart) {
    std::vector<std::unique_ptr<LockRelease>> locks;
    std::vector<std::string> inits(cart.lines.size());
    const auto lock_expiry =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(o_.lock.ttl_ms);
    for (std::size_t i = 0; i < cart.lines.size(); ++i) {
      if (cart.line_status[i] != Status::uninitialized) continue;
      const std::string lock_key = companion_key(cart.keys[i], kLockSuffix);
      const std::string token = random_token();
      const std::string& key = cart.keys[i];
      LockWait wait = acquire_lock(ctx_.redis(), lock_key, token, o_.lock, [&] {
        return ctx_.redis().call(Call{nullptr, {"EXISTS", key}, true}).integer == 1;
      });
      if (wait == LockWait::resolved) continue;
      if (wait == LockWait::timed_out) {
        return fail(cart, Status::busy,
                    fmt::format("init lock {} still held by another process after {} ms; "
                                "nothing was held",
                                lock_key, o_.lock.wait_ms));
      }
      locks.push_back(std::make_unique<LockRelease>(ctx_.redis(), lock_key, token));
      ParsedNumber init =
          initial_.of(cart.lines[i].sku, lock_expiry - std::chrono::milliseconds(200));
      if (!init.ok()) {
        return fail(
            cart, Status::error,
            fmt::format("item '{}': {}; nothing was created", cart.lines[i].sku, init.error));
      }
      inits[i] = std::to_string(init.value);
    }
    std::vector<CallResult> results = ctx_.redis().run({call_for(cart, inits)});
    apply(cart, results[0]);
  }

  Context& ctx_;
  Kind kind_;
  const HoldOptions& o_;
  InitialStock initial_;
};

// A Redis Cluster runs a script on one slot only; a hold's record and lines are in several.
void refuse_on_cluster(const Program& program, const std::string& what) {
  if (!program.common.cluster) return;
  throw StockctlError(
      fmt::format("{}: holds and orders on Redis Cluster are not built yet (a hold's record and "
                  "its lines live in different hash slots, and one script reaches one slot); "
                  "use a standalone Redis or sentinel URL",
                  what));
}

std::vector<Cart> carts_from_words(const HoldOptions& o, const KeyScheme& scheme) {
  Cart cart;
  cart.id = o.id;
  for (std::size_t i = 0; i < o.lines.size(); ++i) {
    HoldLine line;
    if (std::string problem = parse_hold_line(o.lines[i], line); !problem.empty()) {
      fail(cart, Status::invalid,
           fmt::format("line {} '{}': {}", i + 1, escape_control(o.lines[i]), problem));
      return {cart};
    }
    cart.lines.push_back(line);
  }
  prepare(cart, scheme);
  return {cart};
}

// --file: columns id, sku, qty; rows with the same id form one cart. The whole source is
// validated first: one invalid row and nothing is sent.
std::vector<Cart> carts_from_file(const HoldOptions& o, const KeyScheme& scheme) {
  SourceColumns columns = o.source.columns;
  columns.request_id = "id";
  Source source(o.source.file,
                o.source.format.empty() ? std::nullopt : parse_format(o.source.format));
  std::vector<Cart> carts;
  std::map<std::string, std::size_t> by_id;
  std::vector<std::string> problems;
  RecordHandler handler{
      [&columns](const std::vector<bool>& present) {
        std::string problem = check_op_header(present, columns);
        if (problem.empty() && !present[2]) problem = "the header has no 'id' column";
        return problem;
      },
      [&](Record& record) {
        OpRow row;
        std::string problem = interpret_op_row(record, columns, scheme, row);
        if (problem.empty() && row.request_id.empty()) problem = "column 'id' is empty";
        if (!problem.empty()) {
          problems.push_back(fmt::format("{}:{}: {}", source.name(), record.line, problem));
          return !record.fatal;
        }
        auto [it, fresh] = by_id.emplace(row.request_id, carts.size());
        if (fresh) carts.push_back(Cart{row.request_id, {}, {}, {}, {}, Status::ok, {}, false, {}});
        carts[it->second].lines.push_back(HoldLine{row.sku, row.qty});
        return true;
      }};
  source.read(op_columns(columns), handler);
  for (const std::string& problem : problems) print_error(problem);
  if (!problems.empty()) {
    throw InputError(
        fmt::format("{}: {} invalid rows; nothing was held", source.name(), problems.size()));
  }
  for (Cart& cart : carts) {
    prepare(cart, scheme);
    if (cart.status == Status::invalid) {
      throw InputError(fmt::format("{}: id '{}': {}; nothing was held", source.name(),
                                   escape_control(cart.id), cart.error));
    }
  }
  return carts;
}

ExitCode run_hold(Program& program, Kind kind, HoldOptions& o) {
  validate_init_source(o.init);
  o.init.format = o.source.format;
  Context ctx(program);
  const bool from_file = !o.source.file.empty();
  if (from_file && (o.id_given || !o.lines.empty())) {
    throw InputError(fmt::format("{}: give ID SKU=QTY... or --file, not both", kind_name(kind)));
  }
  if (!from_file && !o.id_given) {
    throw InputError(fmt::format("{} needs ID SKU=QTY..., or --file FILE", kind_name(kind)));
  }
  if (o.source.skip_invalid) {
    throw InputError(fmt::format("{}: --skip-invalid does not apply: a cart is all or nothing",
                                 kind_name(kind)));
  }
  std::vector<Cart> carts =
      from_file ? carts_from_file(o, ctx.scheme()) : carts_from_words(o, ctx.scheme());
  ExitFold fold;
  if (!from_file && carts[0].status == Status::invalid) {
    print_error(fmt::format("{} {}: {}; nothing was held", kind_name(kind),
                            escape_control(carts[0].id), carts[0].error));
    ctx.out().write(cart_json(kind, carts[0]));
    fold.add(Status::invalid);
    return fold.code();
  }
  refuse_on_cluster(program, kind_name(kind));
  HoldRunner runner(ctx, kind, o);
  for (std::size_t start = 0; start < carts.size(); start += kHoldWindow) {
    std::vector<Cart> window(
        carts.begin() + static_cast<std::ptrdiff_t>(start),
        carts.begin() + static_cast<std::ptrdiff_t>(std::min(carts.size(), start + kHoldWindow)));
    runner.run(window);
    for (const Cart& cart : window) {
      if (needs_error_line(cart.status) && !cart.error.empty()) {
        print_error(fmt::format("{} {}: {}", kind_name(kind), escape_control(cart.id), cart.error));
      }
      ctx.out().write(cart_json(kind, cart));
      fold.add(cart.status);
    }
  }
  return fold.code();
}

// confirm, release, cancel -------------------------------------------------------------------

struct SettleOptions {
  std::vector<std::string> ids;
};

struct RecordLine {
  std::string sku;
  std::string key;
  std::int64_t qty = 0;
};

// The record's lines ([sku, key, qty, code] each, as the hold script wrote them).
std::optional<std::vector<RecordLine>> record_lines(const std::string& text) {
  auto parsed = nlohmann::json::parse(text, nullptr, false);
  if (!parsed.is_array()) return std::nullopt;
  std::vector<RecordLine> lines;
  for (const auto& line : parsed) {
    if (!line.is_array() || line.size() != 4 || !line[0].is_string() || !line[1].is_string() ||
        !line[2].is_string()) {
      return std::nullopt;
    }
    ParsedNumber qty = parse_qty(line[2].get<std::string>());
    if (!qty.ok()) return std::nullopt;
    lines.push_back(RecordLine{line[0].get<std::string>(), line[1].get<std::string>(), qty.value});
  }
  return lines;
}

nlohmann::ordered_json settle_json(const std::string& action, const std::string& id, Status status,
                                   const std::vector<RecordLine>& lines,
                                   const std::vector<std::optional<std::int64_t>>& stocks,
                                   bool replayed, const std::string& error) {
  nlohmann::ordered_json j;
  j["op"] = action;
  j["id"] = id;
  j["status"] = status_name(status);
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    nlohmann::ordered_json line;
    line["sku"] = lines[i].sku;
    line["key"] = lines[i].key;
    line["qty"] = lines[i].qty;
    line["stock"] = i < stocks.size() && stocks[i] ? nlohmann::ordered_json(*stocks[i]) : nullptr;
    out.push_back(std::move(line));
  }
  j["lines"] = std::move(out);
  if (replayed) j["replayed"] = true;
  if (!error.empty()) j["error"] = error;
  return j;
}

Status settle_status(const std::string& word) {
  if (word == "ok") return Status::ok;
  if (word == "expired") return Status::expired;
  if (word == "conflict") return Status::conflict;
  if (word == "missing") return Status::missing;
  return Status::error;
}

std::string settle_conflict(const std::string& action) {
  if (action == "confirm") return "only a held hold can be confirmed";
  if (action == "release") return "only a held hold can be released (cancel gives back a sale)";
  return "nothing to cancel";
}

ExitCode settle_one(Context& ctx, const std::string& action, const std::string& id,
                    ExitFold& fold) {
  auto report = [&](Status status, const std::vector<RecordLine>& lines,
                    const std::vector<std::optional<std::int64_t>>& stocks, bool replayed,
                    const std::string& error) {
    if (needs_error_line(status)) {
      print_error(fmt::format("{} {}: {}", action, escape_control(id), error));
    }
    ctx.out().write(settle_json(action, id, status, lines, stocks, replayed, error));
    fold.add(status);
    return fold.code();
  };
  if (std::string problem = validate_hold_id(id); !problem.empty()) {
    return report(Status::invalid, {}, {}, false, problem);
  }
  const std::string record = hold_record_key(ctx.scheme(), id);
  Reply text = ctx.redis().call(Call{nullptr, {"HGET", record, "lines"}, true});
  if (text.is_nil()) return report(Status::missing, {}, {}, false, "");
  std::optional<std::vector<RecordLine>> lines;
  if (text.type == Reply::Type::string) lines = record_lines(text.str);
  if (!lines) {
    return report(Status::error, {}, {}, false,
                  fmt::format("{}: the record is not one stockctl wrote", record));
  }
  const ChangeLogSettings& log = ctx.change_log();
  Call call{&settle_script(), {record, holds_index_key(ctx.scheme())}, true, true};
  for (const RecordLine& line : *lines) append_line_keys(call.args, line.key, log.enabled);
  call.numkeys = static_cast<int>(call.args.size());
  call.args.insert(call.args.end(), {action, id, log.enabled ? std::to_string(log.max_entries) : "",
                                     log.actor, log.reason, log.enabled ? "4" : "3"});
  Reply r = ctx.redis().call(call);
  if (r.is_error()) {
    ItemResult item;
    item.key = record;
    apply_error_reply(item, r.str);
    return report(item.status, *lines, {}, false, item.error);
  }
  if (r.type != Reply::Type::array || r.elements.size() != 2 + lines->size()) {
    return report(Status::error, *lines, {}, false,
                  fmt::format("unexpected reply from the settle script: {}", describe_reply(r)));
  }
  std::vector<std::optional<std::int64_t>> stocks;
  for (std::size_t i = 0; i < lines->size(); ++i) {
    std::int64_t s = r.elements[2 + i].integer;
    stocks.push_back(s >= 0 ? std::optional<std::int64_t>(s) : std::nullopt);
  }
  Status status = settle_status(r.elements[0].str);
  std::string error = status == Status::conflict ? settle_conflict(action) : "";
  if (status == Status::missing) lines->clear();
  return report(status, *lines, stocks, r.elements[1].integer == 1, error);
}

ExitCode run_settle(Program& program, const std::string& action, const SettleOptions& o) {
  Context ctx(program);
  if (o.ids.empty()) throw InputError(fmt::format("{} needs ID...", action));
  refuse_on_cluster(program, action);
  ExitFold fold;
  for (const std::string& id : o.ids) settle_one(ctx, action, id, fold);
  return fold.code();
}

// reap ---------------------------------------------------------------------------------------

ExitCode run_reap(Program& program) {
  Context ctx(program);
  const ChangeLogSettings& log = ctx.change_log();
  std::int64_t holds = 0;
  std::int64_t units = 0;
  for (const std::string& node : ctx.redis().primaries()) {
    (void)node;  // one index per standalone server (holds are refused on a cluster)
    for (bool more = true; more;) {
      Call call{&reap_script(),
                {holds_index_key(ctx.scheme()), std::to_string(kReapBatch),
                 log.enabled ? std::to_string(log.max_entries) : "", log.actor, log.reason},
                true,
                true};
      call.numkeys = 1;
      Reply r = ctx.redis().call(call);
      if (r.is_error() || r.type != Reply::Type::array || r.elements.size() != 3) {
        throw StockctlError(fmt::format("reap: unexpected reply: {}", describe_reply(r)));
      }
      holds += r.elements[0].integer;
      units += r.elements[1].integer;
      more = r.elements[2].integer == 1;
    }
    if (program.common.cluster) break;
  }
  nlohmann::ordered_json j;
  j["op"] = "reap";
  j["holds"] = holds;
  j["units"] = units;
  ctx.out().write(j);
  return ExitCode::ok;
}

void add_hold_command(CLI::App& app, Program& program, Kind kind, const std::string& about) {
  auto o = std::make_shared<HoldOptions>();
  CLI::App* sub = app.add_subcommand(kind_name(kind), about);
  sub->add_option("ID", o->id, "the id of the hold or order (an idempotency key)")
      ->each([o](const std::string&) { o->id_given = true; });
  sub->add_option("LINES", o->lines, "SKU=QTY lines (same SKU twice: merged)");
  if (kind == Kind::hold) {
    sub->add_option("--expire", o->expire_s, "seconds until the hold expires (default 600)")
        ->check(integer_range(1, kMaxExpireS));
  }
  sub->add_option("--request-ttl", o->request_ttl_s,
                  "how long the id is remembered, in seconds (default 86400)")
      ->check(integer_range(1, 1LL << 32))
      ->group("Retries");
  const char* init = "Initialization of a missing key";
  sub->add_option("--init-value", o->init.value, "initial stock of a missing item (or unlimited)")
      ->group(init);
  sub->add_option("--init-from", o->init.file,
                  "take a missing item's initial stock from its row in FILE")
      ->group(init);
  sub->add_option("--init-cmd", o->init.command,
                  "run CMD (sh -c, SKU in $STOCKCTL_SKU) under the init lock; its output is the "
                  "initial stock")
      ->group(init);
  sub->add_option("--ttl", o->ttl_s, "expiry in seconds of keys this call creates (default none)")
      ->check(integer_range(0, 1LL << 40))
      ->group(init);
  sub->add_option("--lock-ttl", o->lock.ttl_ms, "init lock lifetime in ms (default 10000)")
      ->check(integer_range(1, 86400000LL))
      ->group(init);
  sub->add_option("--lock-wait", o->lock.wait_ms,
                  "longest wait for the init lock in ms (default 5000)")
      ->check(integer_range(0, 86400000LL))
      ->group(init);
  add_source_options(*sub, o->source, false, false);
  add_common_footer(*sub);
  sub->callback([&program, o, kind] {
    program.run = [&program, o, kind] { return run_hold(program, kind, *o); };
  });
}

void add_settle_command(CLI::App& app, Program& program, const std::string& action,
                        const std::string& about) {
  auto o = std::make_shared<SettleOptions>();
  CLI::App* sub = app.add_subcommand(action, about);
  sub->add_option("ID", o->ids, "ids of holds or orders");
  add_common_footer(*sub);
  sub->callback([&program, o, action] {
    program.run = [&program, o, action] { return run_settle(program, action, *o); };
  });
}

}  // namespace

void setup_holds(CLI::App& app, Program& program) {
  add_hold_command(app, program, Kind::hold,
                   "reserve several items all-or-nothing until confirmed, released or expired");
  add_settle_command(app, program, "confirm", "turn holds into sales");
  add_settle_command(app, program, "release", "give holds' units back to stock");
  add_hold_command(app, program, Kind::order,
                   "deduct several items all-or-nothing (a cart checkout), once per id");
  add_settle_command(app, program, "cancel",
                     "give a confirmed order's or hold's units back, exactly once");
  CLI::App* reap = app.add_subcommand("reap", "give back the units of every expired hold now");
  add_common_footer(*reap);
  reap->callback([&program] { program.run = [&program] { return run_reap(program); }; });
}

}  // namespace stockctl
