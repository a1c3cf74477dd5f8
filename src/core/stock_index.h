#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace stockctl {

/// A stable 64-bit hash of a SKU (FNV-1a), for indexes that keep a hash instead of the SKU.
std::uint64_t sku_hash(std::string_view sku);

/// The stock values of a source by SKU, for --init-from: built from one pass over the source,
/// it keeps 16 bytes per row (the SKU's hash and its value) instead of the rows. SKUs whose
/// hash repeats (the same SKU twice, or a rare collision) are told apart by a second pass that
/// adds just those rows exactly.
class StockIndex {
 public:
  /// The value of a row that names its SKU but is invalid.
  static constexpr std::int64_t kInvalid = INT64_MIN;

  /// What find() says about a SKU.
  struct Found {
    enum class Kind { none, value, invalid, duplicate } kind = Kind::none;
    std::int64_t value = 0;      ///< for `value`
    std::size_t first_line = 0;  ///< for `duplicate`: the SKU's first row
    std::size_t line = 0;        ///< for `duplicate`: its second row
  };

  /// First pass: a row's SKU and value (or kInvalid).
  void add(std::string_view sku, std::int64_t value);
  /// Ends the first pass. Returns true when some hashes repeat: then every row of the source
  /// goes through add_exact() once more before find().
  bool seal();
  /// Second pass: keeps the row exactly if its SKU's hash repeats; does nothing otherwise.
  void add_exact(std::string_view sku, std::int64_t value, std::size_t line);
  /// Looks a SKU up (after seal(), and the second pass when seal() asked for it).
  Found find(std::string_view sku) const;

 private:
  /// (hash, value), sorted by hash after seal(); a deque grows by blocks, where a vector would
  /// double (and briefly hold twice the rows).
  std::deque<std::pair<std::uint64_t, std::int64_t>> entries_;
  std::vector<std::uint64_t> repeated_;  ///< hashes held twice or more
  /// Rows of repeated hashes: SKU -> (value, line) of each of its rows, in file order.
  std::unordered_map<std::string, std::vector<std::pair<std::int64_t, std::size_t>>> exact_;
};

}  // namespace stockctl
