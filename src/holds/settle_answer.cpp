// The answers of confirm, release and cancel, and the records they read.

#include "holds/settle_answer.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "base/diagnostics.h"
#include "base/text.h"
#include "core/quantity.h"

namespace stockctl {

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

namespace {

// The warning for units given back to an item whose stock key is gone: `what` says whose.
std::string nowhere_warning(const std::string& what, const RecordLine& line) {
  return fmt::format(
      "{}: item '{}' has no stock key ({}), so the {} {} given back went nowhere; "
      "'stockctl rebuild' creates the key again from the source of truth",
      what, escape_control(line.sku), escape_control(line.key), line.qty,
      line.qty == 1 ? "unit" : "units");
}

}  // namespace

ExitCode print_reap(Context& ctx, const Reaped& reaped) {
  // One warning per item: its lines may come from several holds (and calls).
  std::vector<RecordLine> items;
  std::unordered_map<std::string, std::size_t> item_of_key;
  std::int64_t nowhere_units = 0;
  for (const RecordLine& line : reaped.nowhere) {
    const auto [at, first] = item_of_key.emplace(line.key, items.size());
    if (first) {
      items.push_back(line);
    } else {
      items[at->second].qty += line.qty;
    }
    nowhere_units += line.qty;
  }
  for (const RecordLine& item : items) print_warning(nowhere_warning("reap", item));
  std::unordered_set<std::string> named;
  for (const RecordLine& item : reaped.kept) {
    if (!named.insert(item.key).second) continue;
    print_error(fmt::format(
        "reap: item '{}' ({}) does not hold a stock value, so its expired holds stay held until "
        "it is repaired ('stockctl init {} VALUE --force'); reap looks at it again a minute later",
        escape_control(item.sku), escape_control(item.key), escape_control(item.sku)));
  }
  for (const std::string& why : reaped.unfinished) print_error("reap: " + why);
  nlohmann::ordered_json j;
  j["op"] = "reap";
  j["holds"] = reaped.holds;
  j["units"] = reaped.units;
  j["units_nowhere"] = nowhere_units;
  ctx.out().write_summary(j);
  return reaped.kept.empty() && reaped.unfinished.empty() ? ExitCode::ok : ExitCode::failure;
}

void print_settle(Context& ctx, const std::string& action, const std::string& id,
                  const Settled& settled, ExitFold& fold) {
  const Status status = settled.status;
  if (needs_error_line(status)) {
    print_error(fmt::format("{} {}: {}", action, shown_value(id), settled.error));
  }
  for (std::size_t i : settled.nowhere) {
    if (i >= settled.lines.size()) continue;
    print_warning(nowhere_warning(fmt::format("{} {}", action, shown_value(id)), settled.lines[i]));
  }
  ctx.out().write(settle_json(action, id, status, settled.lines, settled.stocks, settled.replayed,
                              settled.error));
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
  if (word == "conflict" || word == "released" || word == "removed") return Status::conflict;
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

std::string removed_line_error(const RecordLine& line) {
  return fmt::format(
      "item '{}' ({}) no longer held this hold's {} {} (its holds were deleted, by delete "
      "--force or by hand), so the hold cannot be confirmed: it was released instead, and the "
      "units its other lines held went back to stock",
      escape_control(line.sku), escape_control(line.key), line.qty,
      line.qty == 1 ? "unit" : "units");
}

}  // namespace stockctl
