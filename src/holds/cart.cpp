// A hold's or order's cart: its lines from the words or from --file, checked and merged, and its
// answer line.

#include "holds/cart.h"

#include <fmt/format.h>

#include <map>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/text.h"
#include "core/sku.h"
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
  // A cart refused for a short line held nothing: its other lines are not "ok" (a script that
  // counts the ok lines would count them as sold), they carry no status.
  const bool refused = cart.status == Status::insufficient || cart.status == Status::uninitialized;
  nlohmann::ordered_json lines = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < cart.lines.size(); ++i) {
    nlohmann::ordered_json line;
    line["sku"] = cart.lines[i].sku;
    line["key"] = i < cart.keys.size() ? nlohmann::ordered_json(cart.keys[i]) : nullptr;
    line["qty"] = cart.lines[i].qty;
    if (i < cart.line_status.size()) {
      const Status status = cart.line_status[i];
      const bool held_nothing = refused && (status == Status::ok || status == Status::unlimited);
      line["status"] = held_nothing ? nlohmann::ordered_json(nullptr)
                                    : nlohmann::ordered_json(status_name(status));
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
  // --trim takes the white space around an id away, as around a SKU or a request id.
  if (scheme.trim_skus) cart.id = std::string(trim_white_space(cart.id));
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

namespace {

// The answer of an invalid row: the id as written when the row has one (the line names what it
// was about), no lines, and the problem with its file and line.
Cart refused_row(const Record& record, const std::string& problem, const std::string& source) {
  Cart bad;
  if (record.fields.size() > 2) bad.id = record.fields[2].text;
  fail(bad, Status::invalid, fmt::format("{}:{}: {}", source, record.line, problem));
  return bad;
}

// Nothing is sent: every refused row or cart is told on standard error (and its line printed by
// the caller), then the source is refused as a whole.
[[noreturn]] void refuse_source(std::vector<Cart> refused, std::string why) {
  for (const Cart& bad : refused) print_error(bad.error);
  throw InvalidCarts(why, std::move(refused));
}

}  // namespace

// --file: columns id, sku, qty (renamed by --id-column, --sku-column, --qty-column; the id is
// read as a batch row's request id is); rows with the same id form one cart. The whole source
// is validated first: one invalid row (or cart) and nothing is sent.
std::vector<Cart> carts_from_file(const HoldOptions& o, const KeyScheme& scheme) {
  const SourceColumns& columns = o.source.columns;
  Source source(o.source.file,
                o.source.format.empty() ? std::nullopt : parse_format(o.source.format),
                o.source.columns.delimiter);
  std::vector<Cart> carts;
  std::map<std::string, std::size_t> by_id;
  std::vector<Cart> refused;
  RecordHandler handler{[&columns](const std::vector<bool>& present) {
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
                            refused.push_back(refused_row(record, problem, source.name()));
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
  if (!refused.empty()) {
    const std::size_t n = refused.size();
    refuse_source(std::move(refused), fmt::format("{}: {} invalid {}; nothing changed",
                                                  source.name(), n, n == 1 ? "row" : "rows"));
  }
  for (Cart& cart : carts) {
    prepare_cart(cart, scheme);
    if (cart.status != Status::invalid) continue;
    cart.error = fmt::format("{}: id {}: {}", source.name(), quote_value(cart.id), cart.error);
    refused.push_back(cart);
  }
  // One invalid cart: its problem is the refusal (main prints it); several: each, then a count.
  if (refused.size() == 1) throw InvalidCarts(refused[0].error + "; nothing changed", refused);
  if (!refused.empty()) {
    const std::size_t n = refused.size();
    refuse_source(std::move(refused),
                  fmt::format("{}: {} invalid ids; nothing changed", source.name(), n));
  }
  return carts;
}

}  // namespace stockctl
