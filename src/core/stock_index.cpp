#include "core/stock_index.h"

#include <algorithm>

namespace stockctl {

std::uint64_t sku_hash(std::string_view sku) {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a 64 offset basis
  for (unsigned char c : sku) h = (h ^ c) * 1099511628211ULL;
  return h;
}

void StockIndex::add(std::string_view sku, std::int64_t value) {
  entries_.emplace_back(sku_hash(sku), value);
}

bool StockIndex::seal() {
  std::sort(entries_.begin(), entries_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < entries_.size(); ++i) {
    if (entries_[i].first == entries_[i - 1].first &&
        (repeated_.empty() || repeated_.back() != entries_[i].first)) {
      repeated_.push_back(entries_[i].first);
    }
  }
  return !repeated_.empty();
}

void StockIndex::add_exact(std::string_view sku, std::int64_t value, std::size_t line) {
  if (!std::binary_search(repeated_.begin(), repeated_.end(), sku_hash(sku))) return;
  exact_[std::string(sku)].emplace_back(value, line);
}

StockIndex::Found StockIndex::find(std::string_view sku) const {
  Found found;
  const std::uint64_t hash = sku_hash(sku);
  auto value_found = [&found](std::int64_t value) {
    found.kind = value == kInvalid ? Found::Kind::invalid : Found::Kind::value;
    found.value = value;
    return found;
  };
  if (std::binary_search(repeated_.begin(), repeated_.end(), hash)) {
    auto it = exact_.find(std::string(sku));
    if (it == exact_.end()) return found;
    const auto& rows = it->second;
    if (rows.size() == 1) return value_found(rows[0].first);
    found.kind = Found::Kind::duplicate;
    found.first_line = rows[0].second;
    found.line = rows[1].second;
    return found;
  }
  auto it = std::lower_bound(entries_.begin(), entries_.end(), hash,
                             [](const auto& entry, std::uint64_t h) { return entry.first < h; });
  if (it == entries_.end() || it->first != hash) return found;
  // A SKU that the source lacks but whose hash one of its rows has would get that row's value:
  // with 64 bits, about one chance in 2^64 per row, the price of not keeping the SKUs.
  return value_found(it->second);
}

}  // namespace stockctl
