// Holds and orders on one slot: hold-4002.lua over a cart's lines, with the init lock protocol;
// the answers of hold, order, confirm, release and cancel.

#include "bulk/hold_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "base/text.h"
#include "bulk/replica_ack.h"
#include "core/error_reply.h"
#include "core/exit_fold.h"
#include "core/quantity.h"
#include "core/sku.h"
#include "redis/errors.h"
#include "redis/scripts/registry.h"
#include "sources/open_source.h"
#include "sources/rows.h"

namespace stockctl {

const char* kind_name(CartKind kind) { return kind == CartKind::hold ? "hold" : "order"; }

nlohmann::ordered_json cart_json(CartKind kind, const Cart& cart) {
  nlohmann::ordered_json j;
  j["op"] = kind_name(kind);
  j["id"] = cart.id;
  j["status"] = status_name(cart.status);
  if (kind == CartKind::hold) {
    // Known whenever the hold exists, even when its cart failed afterwards (a write that
    // fewer replicas than --wait-replicas acknowledged is on the primary all the same).
    j["expires_at_ms"] = cart.expires_at_ms ? nlohmann::ordered_json(*cart.expires_at_ms)
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
  // "replayed" says this is the first answer again, which an error never is.
  if (cart.replayed && cart.status != Status::error) {
    j["replayed"] = true;
    if (!cart.since.empty()) j["state"] = cart.since;
  }
  if (!cart.error.empty()) j["error"] = cart.error;
  return j;
}

void fail(Cart& cart, Status status, std::string why) {
  cart.status = status;
  cart.error = std::move(why);
}

void prepare_cart(Cart& cart, const KeyScheme& scheme) {
  if (std::string problem = validate_hold_id(cart.id); !problem.empty()) {
    return fail(cart, Status::invalid, problem);
  }
  // `hold A=1 B=1` forgot the ID: refused rather than taking "A=1" as one.
  if (cart.id.find('=') != std::string::npos) {
    return fail(cart, Status::invalid,
                "an id cannot contain '=' (is the ID missing? it comes before the SKU=QTY lines)");
  }
  if (cart.lines.empty()) return fail(cart, Status::invalid, "no lines (SKU=QTY)");
  if (cart.lines.size() > kMaxHoldLines) {
    return fail(cart, Status::invalid,
                fmt::format("{} lines; at most {} per id", cart.lines.size(), kMaxHoldLines));
  }
  for (HoldLine& line : cart.lines) {
    if (std::string problem = accept_sku(line.sku, scheme); !problem.empty()) {
      return fail(cart, Status::invalid, fmt::format("item '{}': {}", line.sku, problem));
    }
  }
  if (std::string problem = merge_hold_lines(cart.lines); !problem.empty()) {
    return fail(cart, Status::invalid, problem);
  }
  for (const HoldLine& line : cart.lines) cart.keys.push_back(stock_key(scheme, line.sku));
  cart.record_key = hold_record_key(scheme, cart.id);
  cart.index_key = holds_index_key(scheme);
}

void append_line_keys(std::vector<std::string>& keys, const std::string& stock, bool log) {
  keys.push_back(stock);
  keys.push_back(companion_key(stock, kHoldsSuffix));
  keys.push_back(companion_key(stock, kHeldSuffix));
  if (log) keys.push_back(log_key(stock));
}

HoldRunner::HoldRunner(Context& ctx, CartKind kind, const HoldOptions& o, long long expire_ms)
    : ctx_(ctx), kind_(kind), o_(o), expire_ms_(expire_ms), initial_(o.init, ctx.scheme()) {}

void HoldRunner::run(std::vector<Cart>& carts) {
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
    if (require_acks_) check_acks(*sent[i], results[i]);
    if (sent[i]->status == Status::uninitialized && o_.init.given()) initialize(*sent[i]);
  }
}

Call HoldRunner::call_for(const Cart& cart, const std::vector<std::string>& inits) const {
  const ChangeLogSettings& log = ctx_.change_log();
  Call call{&hold_script(), {}, true, true};
  call.args = {cart.record_key, cart.index_key};
  for (const std::string& key : cart.keys) append_line_keys(call.args, key, log.enabled);
  call.numkeys = static_cast<int>(call.args.size());
  call.args.insert(call.args.end(), {kind_name(kind_), cart.id, std::to_string(expire_ms_),
                                     std::to_string(o_.request_ttl_s), std::to_string(o_.ttl_s),
                                     log.enabled ? std::to_string(log.max_entries) : "", log.actor,
                                     log.reason, log.enabled ? "4" : "3"});
  for (std::size_t i = 0; i < cart.lines.size(); ++i) {
    call.args.push_back(cart.lines[i].sku);
    call.args.push_back(std::to_string(cart.lines[i].qty));
    call.args.push_back(inits.empty() ? "" : inits[i]);
  }
  return call;
}

void HoldRunner::apply(Cart& cart, const CallResult& result) const {
  cart.error.clear();
  cart.expires_at_ms.reset();
  if (result.state != CallResult::State::replied) return fail(cart, Status::error, result.error);
  const Reply& r = result.reply;
  if (r.is_error()) return apply_error(cart, r.str);
  const std::size_t n = cart.lines.size();
  if (r.type != Reply::Type::array || r.elements.size() != 2 + 2 * n) {
    return fail(cart, Status::error,
                fmt::format("unexpected reply from the hold script: {}", describe_reply(r)));
  }
  // A repeat answers 1, or the state of a hold that is no longer held.
  cart.replayed = r.elements[0].integer == 1 || r.elements[0].type == Reply::Type::string;
  cart.since = r.elements[0].type == Reply::Type::string ? r.elements[0].str : "";
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
  // A short line means nothing was held: only a hold that is held has an expiry.
  if (cart.status == Status::ok && cart.since.empty()) cart.expires_at_ms = r.elements[1].integer;
}

void HoldRunner::check_acks(Cart& cart, const CallResult& result) const {
  if (cart.status != Status::ok || acknowledged(result, ctx_.redis().options())) return;
  if (!cart.replayed)
    return fail(cart, Status::error, unacknowledged(result, ctx_.redis().options()));
  // A repeat wrote nothing; what is not confirmed is the write of its first answer, which this
  // answer is then not: an error is never a replay.
  cart.replayed = false;
  fail(cart, Status::error,
       fmt::format("id '{}' was {} before and this repeat changed nothing, but the replicas have "
                   "not confirmed it: {}",
                   escape_control(cart.id), kind_ == CartKind::hold ? "held" : "ordered",
                   unacknowledged(result, ctx_.redis().options())));
}

void HoldRunner::apply_error(Cart& cart, const std::string& text) const {
  if (classify_error_reply(text) == ErrorReply::stockctl_conflict) {
    return fail(
        cart, Status::conflict,
        fmt::format("id '{}' was already used with other lines or for {}; nothing "
                    "changed",
                    escape_control(cart.id), text.substr(18) == "hold" ? "an order" : "a hold"));
  }
  ItemResult item;
  item.key = cart.record_key;
  std::string reply = text;
  // hold-4002.lua names the line whose stored value is corrupt: "STOCKCTL_CORRUPT <i> <value>".
  if (auto corrupt = corrupt_line(text); corrupt && corrupt->index < cart.keys.size()) {
    item.key = cart.keys[corrupt->index];
    item.sku = cart.lines[corrupt->index].sku;
    reply = std::move(corrupt->reply);
  }
  apply_error_reply(item, reply);
  const std::string what = item.sku.empty()
                               ? item.error
                               : fmt::format("item '{}': {}", escape_control(item.sku), item.error);
  fail(cart, item.status,
       fmt::format("{}; nothing was {}", what, kind_ == CartKind::hold ? "held" : "ordered"));
}

// The init lock protocol of deduct, for every line whose key is missing: the locks are taken
// in the lines' order (by SKU, the same in every process, so two carts never wait on each
// other), then the cart is sent again with the initial stock of each line still missing.
void HoldRunner::initialize(Cart& cart) {
  std::vector<std::unique_ptr<LockRelease>> locks;
  std::vector<std::string> inits(cart.lines.size());
  const auto lock_expiry =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(o_.lock.ttl_ms);
  for (std::size_t i = 0; i < cart.lines.size(); ++i) {
    if (cart.line_status[i] != Status::uninitialized) continue;
    const std::string lock_key = companion_key(cart.keys[i], kLockSuffix);
    const std::string token = new_lock_value();
    const std::string& key = cart.keys[i];
    LockWait wait = acquire_lock(ctx_.redis(), lock_key, token, o_.lock, [&] {
      return ctx_.redis().call(Call::read({"EXISTS", key})).integer == 1;
    });
    if (wait == LockWait::resolved) continue;
    if (wait == LockWait::timed_out && interrupted()) {
      return fail(cart, Status::error, "not applied: " + interrupt_reason());
    }
    if (wait == LockWait::timed_out) {
      return fail(
          cart, Status::busy,
          fmt::format("init lock still held by another process after {} ms: {}; nothing was {}",
                      o_.lock.wait_ms, describe_held_lock(ctx_.redis(), lock_key),
                      kind_ == CartKind::hold ? "held" : "ordered"));
    }
    locks.push_back(std::make_unique<LockRelease>(ctx_.redis(), lock_key, token));
    ParsedNumber init =
        initial_.of(cart.lines[i].sku, lock_expiry - std::chrono::milliseconds(200));
    if (!init.ok()) {
      return fail(cart, Status::error,
                  fmt::format("item '{}': {}; nothing was created", cart.lines[i].sku, init.error));
    }
    inits[i] = std::to_string(init.value);
  }
  std::vector<CallResult> results = ctx_.redis().run({call_for(cart, inits)});
  apply(cart, results[0]);
  if (require_acks_) check_acks(cart, results[0]);
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
  prepare_cart(cart, scheme);
  return {cart};
}

// --file: columns id, sku, qty (renamed by --id-column, --sku-column, --qty-column; the id is
// read as a batch row's request id is); rows with the same id form one cart. The whole source
// is validated first: one invalid row and nothing is sent.
std::vector<Cart> carts_from_file(const HoldOptions& o, const KeyScheme& scheme) {
  const SourceColumns& columns = o.source.columns;
  Source source(o.source.file,
                o.source.format.empty() ? std::nullopt : parse_format(o.source.format),
                o.source.columns.delimiter);
  std::vector<Cart> carts;
  std::map<std::string, std::size_t> by_id;
  std::vector<std::string> problems;
  RecordHandler handler{
      [&columns](const std::vector<bool>& present) {
        std::string problem = check_op_header(present, columns);
        if (problem.empty() && !present[2]) {
          problem = fmt::format("header has no '{}' column", columns.request_id);
        }
        return problem;
      },
      [&](Record& record) {
        OpRow row;
        std::string problem = interpret_op_row(record, columns, scheme, row);
        if (problem.empty() && row.request_id.empty()) {
          problem = fmt::format("column '{}' is empty", columns.request_id);
        }
        if (!problem.empty()) {
          problems.push_back(fmt::format("{}:{}: {}", source.name(), record.line, problem));
          return !record.fatal;
        }
        auto [it, fresh] = by_id.emplace(row.request_id, carts.size());
        if (fresh) {
          Cart cart;
          cart.id = row.request_id;
          carts.push_back(std::move(cart));
        }
        carts[it->second].lines.push_back(HoldLine{row.sku, row.qty});
        return true;
      }};
  source.read(op_columns(columns), handler);
  for (const std::string& problem : problems) print_error(problem);
  if (!problems.empty()) {
    throw InputError(fmt::format("{}: {} invalid {}; nothing changed", source.name(),
                                 problems.size(), problems.size() == 1 ? "row" : "rows"));
  }
  for (Cart& cart : carts) {
    prepare_cart(cart, scheme);
    if (cart.status == Status::invalid) {
      throw InputError(fmt::format("{}: id '{}': {}; nothing changed", source.name(),
                                   escape_control(cart.id), cart.error));
    }
  }
  return carts;
}

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

std::optional<std::vector<RecordLine>> hold_record_lines(std::string_view text) {
  const auto head_end = text.find('\n');
  const auto kind_end =
      head_end == std::string_view::npos ? head_end : text.find('\n', head_end + 1);
  if (kind_end == std::string_view::npos) return std::nullopt;
  std::vector<RecordLine> lines;
  for (std::size_t at = kind_end + 1; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    const auto tab1 = line.find('\t');
    const auto tab2 = tab1 == std::string_view::npos ? tab1 : line.find('\t', tab1 + 1);
    if (tab2 == std::string_view::npos) return std::nullopt;
    ParsedNumber qty = parse_qty(std::string(line.substr(tab2 + 1)));
    if (!qty.ok()) return std::nullopt;
    lines.push_back(RecordLine{std::string(line.substr(0, tab1)),
                               std::string(line.substr(tab1 + 1, tab2 - tab1 - 1)), qty.value});
    at = end + 1;
  }
  if (lines.empty()) return std::nullopt;
  return lines;
}

void print_settle(Context& ctx, const std::string& action, const std::string& id, Status status,
                  const std::vector<RecordLine>& lines,
                  const std::vector<std::optional<std::int64_t>>& stocks, bool replayed,
                  const std::string& error, ExitFold& fold) {
  if (needs_error_line(status)) {
    print_error(fmt::format("{} {}: {}", action, escape_control(id), error));
  }
  ctx.out().write(settle_json(action, id, status, lines, stocks, replayed, error));
  ctx.count(status);
  fold.add(action == "release" && status == Status::expired ? ExitCode::ok : exit_code_for(status));
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
  if (word == "conflict" || word == "released") return Status::conflict;
  if (word == "missing") return Status::missing;
  return Status::error;
}

std::string settle_conflict(const std::string& action, const std::string& word) {
  if (word == "released") {
    return "the hold was released (by release or cancel) and its units went back to stock; a "
           "released hold cannot be confirmed";
  }
  if (word != "conflict") return "";
  if (action == "confirm") return "only a held hold can be confirmed";
  if (action == "release") return "only a held hold can be released (cancel gives back a sale)";
  return "nothing to cancel";
}

Call settle_call(const Context& ctx, const std::string& record, const std::string& index,
                 const std::string& action, const std::string& id,
                 const std::vector<RecordLine>& lines) {
  const ChangeLogSettings& log = ctx.change_log();
  Call call{&settle_script(), {record, index}, true, true};
  for (const RecordLine& line : lines) append_line_keys(call.args, line.key, log.enabled);
  call.numkeys = static_cast<int>(call.args.size());
  call.args.insert(call.args.end(), {action, id, log.enabled ? std::to_string(log.max_entries) : "",
                                     log.actor, log.reason, log.enabled ? "4" : "3"});
  return call;
}

}  // namespace stockctl
