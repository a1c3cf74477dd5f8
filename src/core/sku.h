#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace stockctl {

/// How item ids map to Redis keys: `<prefix>{SKU}` with hash tags, `<prefix>SKU` without.
struct KeyScheme {
  std::string prefix = "stock:";
  bool hashtag = true;
  /// --trim: white space around an item id given as input is removed before it is checked.
  bool trim_skus = false;
};

/// The longest item id, in bytes.
inline constexpr std::size_t kMaxSkuBytes = 512;

/// Returns why `sku` cannot name an item under `scheme`, or "" when it can. Checks length,
/// control characters, UTF-8 (every JSON line names the item), and that every companion key can
/// share the stock key's hash slot.
std::string validate_sku(std::string_view sku, const KeyScheme& scheme);

/// validate_sku without the UTF-8 check: for an id read from a key another program may have
/// written, which is an item all the same (found, and named, never passed over).
std::string stored_sku_problem(std::string_view sku, const KeyScheme& scheme);

/// Checks an item id read from input (an argument, a source row, a command's output): with
/// `scheme.trim_skus` it first removes the white space around it, else such white space is a
/// problem (a `char(n)` column's padding would otherwise name another key). Returns why the
/// id cannot be used, or "" (then validate_sku holds too).
std::string accept_sku(std::string& sku, const KeyScheme& scheme);

/// `text` without the ASCII white space at either end.
std::string_view trim_white_space(std::string_view text);

/// The stock key of a valid item id.
std::string stock_key(const KeyScheme& scheme, std::string_view sku);

/// A key in the same Redis Cluster hash slot as `stock_key`, ending in `suffix` (":lock", ...).
/// Keeps the stock key's own hash tag when it has one, else wraps the whole key in one.
std::string companion_key(std::string_view stock_key, std::string_view suffix);

/// The suffixes of an item's companion keys, each appended to its stock key by companion_key.
inline constexpr std::string_view kLockSuffix = ":lock";
/// The change log of an item (a list; lua/include/log_entry.lua).
inline constexpr std::string_view kLogSuffix = ":changes";
/// The first entry of an item's change log that a load created (a string; log_entry.lua).
inline constexpr std::string_view kFirstLogSuffix = ":first";
/// The change log of earlier versions (a stream per item): read and deleted, never written.
inline constexpr std::string_view kStreamLogSuffix = ":log";
/// Followed by the request id: the ledger of earlier versions (one key per request).
inline constexpr std::string_view kRequestSuffix = ":req:";
/// Followed by "<request ttl>:<generation>": the ledger (a hash of request id -> record).
inline constexpr std::string_view kLedgerSuffix = ":ids:";
inline constexpr std::string_view kHoldsSuffix = ":holds";  ///< hold id -> expiry ms (sorted set)
inline constexpr std::string_view kHeldSuffix = ":held";    ///< hold id -> qty, "" -> sum (hash)
/// The buckets whose change logs a merge or new split copied into the item's (a set, a day).
inline constexpr std::string_view kKeptLogsSuffix = ":kept-logs";

/// The key of an item's change log (a list of entries after its first), in its stock key's slot.
inline std::string log_key(std::string_view stock_key) {
  return companion_key(stock_key, kLogSuffix);
}

/// The key of the first entry of an item's change log, written by the load that created the
/// item (a string), in its stock key's slot.
inline std::string first_log_key(std::string_view stock_key) {
  return companion_key(stock_key, kFirstLogSuffix);
}

/// The key of an item's change log as earlier versions wrote it (a stream), in its slot.
inline std::string stream_log_key(std::string_view stock_key) {
  return companion_key(stock_key, kStreamLogSuffix);
}

/// The log of first entries shared by the items of `stock_key`'s hash slot (a hash: stock key
/// -> entry), under every prefix, where earlier versions put a loaded item's first entry: read,
/// moved and deleted, never written.
std::string slot_log_key(std::string_view stock_key);

/// The key of an item's ledger of request ids for generation `generation` (Unix time divided
/// by `request_ttl_s`), in its stock key's slot.
std::string ledger_key(std::string_view stock_key, long long request_ttl_s, long long generation);

/// The three ledgers an id is looked up in at Unix time `now_s`, in the stock script's KEYS
/// order: the current generation's, the previous one's and the next one's (lua/stock-2.lua,
/// "The ledger").
std::array<std::string, 3> ledger_keys(std::string_view stock_key, long long request_ttl_s,
                                       long long now_s);

/// The item id whose stock key is `key` under `scheme`, or nullopt when `key` is not a stock key
/// (another prefix, or a companion key: lock, ledger, log). Without hash tags a stock key that
/// carries its own tag and ends like a companion key is taken for the companion key. An id that
/// is not UTF-8 (stored by another program) is an item's all the same.
std::optional<std::string> sku_of_key(const KeyScheme& scheme, std::string_view key);

/// Escapes Redis glob characters (* ? [ ] \) so that `text` matches only itself.
std::string escape_glob(std::string_view text);

/// The part of `key` Redis Cluster hashes: the first non-empty {...} tag, else the whole key.
std::string_view hash_tag(std::string_view key);

/// Returns why `id` cannot be a request id (empty, over 256 bytes, control characters), or "".
std::string validate_request_id(std::string_view id);

/// The key of the run-wide rebuild lock for one prefix.
std::string rebuild_lock_key(const KeyScheme& scheme);

}  // namespace stockctl
