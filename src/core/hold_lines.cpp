#include "core/hold_lines.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/text.h"
#include "core/quantity.h"

namespace stockctl {

std::string parse_hold_line(std::string_view text, HoldLine& line) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos) return "a line is SKU=QTY";
  if (eq == 0) return "the SKU before '=' is missing";
  const std::string_view qty = text.substr(eq + 1);
  if (qty.empty()) return "the QTY after '=' is missing";
  ParsedNumber n = parse_qty(std::string(qty));
  if (!n.ok()) return fmt::format("QTY {}", n.error);
  line.sku = std::string(text.substr(0, eq));
  line.qty = n.value;
  return {};
}

std::string merge_hold_lines(std::vector<HoldLine>& lines) {
  constexpr std::int64_t kMax = (std::int64_t{1} << 53) - 1;
  std::map<std::string, std::int64_t> merged;
  for (const HoldLine& line : lines) {
    std::int64_t& sum = merged[line.sku];
    if (sum > kMax - line.qty) {
      return fmt::format("item '{}': the lines add up to more than {}", line.sku, kMax);
    }
    sum += line.qty;
  }
  lines.clear();
  for (auto& [sku, qty] : merged) lines.push_back(HoldLine{sku, qty});
  return {};
}

std::string validate_hold_id(std::string_view id) {
  if (id.empty()) return "an id cannot be empty";
  if (id.size() > 256) return fmt::format("id is {} bytes long; at most 256", id.size());
  if (std::any_of(id.begin(), id.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    return "id contains a control character";
  }
  // A retry whose id differs by a space would be another hold or order, applied again.
  if (id.front() == ' ' || id.back() == ' ') {
    return fmt::format(
        "id {} has a space at its start or end, which would make it another id (--trim "
        "removes it)",
        quote_value(id));
  }
  return {};
}

std::string hold_record_key(const KeyScheme& scheme, std::string_view id) {
  if (scheme.hashtag) return fmt::format("stockctl:hold:{}{{{}}}", scheme.prefix, id);
  return fmt::format("stockctl:hold:{}{}", scheme.prefix, id);
}

std::string holds_index_key(const KeyScheme& scheme) {
  return fmt::format("stockctl:holds-index:{}", scheme.prefix);
}

}  // namespace stockctl
