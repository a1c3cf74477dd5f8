#pragma once

#include <string>
#include <string_view>

namespace stockctl {

/// How item ids map to Redis keys: `<prefix>{SKU}` with hash tags, `<prefix>SKU` without.
struct KeyScheme {
  std::string prefix = "stock:";
  bool hashtag = true;
};

/// The longest item id, in bytes.
inline constexpr std::size_t kMaxSkuBytes = 512;

/// Returns why `sku` cannot name an item under `scheme`, or "" when it can. Checks length,
/// control characters, and that every companion key can share the stock key's hash slot.
std::string validate_sku(std::string_view sku, const KeyScheme& scheme);

/// The stock key of a valid item id.
std::string stock_key(const KeyScheme& scheme, std::string_view sku);

/// A key in the same Redis Cluster hash slot as `stock_key`, ending in `suffix` (":lock", ...).
/// Keeps the stock key's own hash tag when it has one, else wraps the whole key in one.
std::string companion_key(std::string_view stock_key, std::string_view suffix);

/// The part of `key` Redis Cluster hashes: the first non-empty {...} tag, else the whole key.
std::string_view hash_tag(std::string_view key);

/// Returns why `id` cannot be a request id (empty, over 256 bytes, control characters), or "".
std::string validate_request_id(std::string_view id);

/// The key of the run-wide rebuild lock for one prefix.
std::string rebuild_lock_key(const KeyScheme& scheme);

}  // namespace stockctl
