#include "core/sku.h"

#include <fmt/format.h>

#include "base/text.h"
#include "core/hash_slot.h"

namespace stockctl {
namespace {

bool has_control_character(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

bool has_hash_tag(std::string_view key) { return hash_tag(key).size() != key.size(); }

// Without our own braces, a stock key K that carries a hash tag has companions K + suffix, which
// start with the prefix too: `key` is one of those when cutting a companion suffix off leaves
// another tagged key under the prefix.
bool looks_like_companion(std::string_view prefix, std::string_view key) {
  auto is_stock_key = [&](std::string_view k) { return starts_with(k, prefix) && has_hash_tag(k); };
  for (std::string_view suffix : {kLockSuffix, kLogSuffix, kFirstLogSuffix, kStreamLogSuffix,
                                  kHoldsSuffix, kHeldSuffix, kKeptLogsSuffix}) {
    if (ends_with(key, suffix) && is_stock_key(key.substr(0, key.size() - suffix.size()))) {
      return true;
    }
  }
  for (std::string_view infix : {kRequestSuffix, kLedgerSuffix}) {
    for (auto at = key.find(infix); at != std::string_view::npos; at = key.find(infix, at + 1)) {
      if (is_stock_key(key.substr(0, at))) return true;
    }
  }
  return false;
}

// stockctl's own keys (run locks, the WAIT's mark, split buckets, hold and cart records, the
// first log entries of earlier versions) live under "stockctl:": an item's key there could be
// one of them, and be overwritten or deleted as one.
constexpr std::string_view kOwnNamespace = "stockctl:";

std::string in_own_namespace(const std::string& key) {
  return fmt::format(
      "key {} is in stockctl's own namespace ('stockctl:'), where its locks, marks, buckets and "
      "hold records live; choose another --prefix",
      quote_value(key));
}

}  // namespace

std::string_view hash_tag(std::string_view key) {
  auto open = key.find('{');
  if (open == std::string_view::npos) return key;
  auto close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

std::string_view trim_white_space(std::string_view text) {
  constexpr std::string_view kWhiteSpace = " \t\r\n\v\f";
  const auto first = text.find_first_not_of(kWhiteSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kWhiteSpace) - first + 1);
}

std::string accept_sku(std::string& sku, const KeyScheme& scheme) {
  const std::string_view trimmed = trim_white_space(sku);
  if (trimmed.size() != sku.size()) {
    if (!scheme.trim_skus) {
      return fmt::format("item id {} has white space at its start or end (--trim removes it)",
                         quote_value(sku));
    }
    sku = std::string(trimmed);
  }
  return validate_sku(sku, scheme);
}

namespace {

// Why `sku` cannot name an item's keys; with `utf8`, also when its bytes are not UTF-8.
std::string sku_problem(std::string_view sku, const KeyScheme& scheme, bool utf8) {
  if (sku.empty()) return "an item id (SKU) cannot be empty";
  if (sku.size() > kMaxSkuBytes) {
    return fmt::format("item id is {} bytes long; at most {} are allowed", sku.size(),
                       kMaxSkuBytes);
  }
  // One pass over the bytes: this runs for every row of a bulk load.
  bool brace = false;
  bool high = false;
  for (unsigned char c : sku) {
    if (c < 0x20 || c == 0x7f) return "item id contains a control character";
    brace = brace || c == '{' || c == '}';
    high = high || c >= 0x80;
  }
  // Every JSON line names the item: bytes that are not UTF-8 would be printed as U+FFFD, and an
  // export read back would make another item of it.
  if (utf8 && high && !valid_utf8(sku)) return "item id is not valid UTF-8";
  if (scheme.hashtag) {
    if (brace) {
      return "item id contains '{' or '}', which would break its hash tag (see --no-hashtag)";
    }
    if (starts_with(scheme.prefix, kOwnNamespace)) return in_own_namespace(stock_key(scheme, sku));
    return {};
  }
  // Without our own braces the key must not carry a '}' that could split its companions' slot.
  std::string key = stock_key(scheme, sku);
  if (starts_with(key, kOwnNamespace)) return in_own_namespace(key);
  if (key.find('}') != std::string::npos && !has_hash_tag(key)) {
    return fmt::format(
        "key {} contains '}}' but no complete hash tag, so its companion keys "
        "could not share its cluster slot",
        quote_value(key));
  }
  if (has_hash_tag(key) && looks_like_companion(scheme.prefix, key)) {
    return fmt::format(
        "key '{}' would read as a companion key (lock, log, request record) of another item", key);
  }
  return {};
}

}  // namespace

std::string validate_sku(std::string_view sku, const KeyScheme& scheme) {
  return sku_problem(sku, scheme, true);
}

std::string stored_sku_problem(std::string_view sku, const KeyScheme& scheme) {
  return sku_problem(sku, scheme, false);
}

std::optional<std::string> sku_of_key(const KeyScheme& scheme, std::string_view key) {
  if (!starts_with(key, scheme.prefix)) return std::nullopt;
  std::string_view rest = key.substr(scheme.prefix.size());
  if (scheme.hashtag) {
    // Item ids hold no braces here, so "{SKU}" with nothing after it is a stock key and
    // anything longer ("{SKU}:lock", ...) is a companion.
    if (rest.size() < 3 || rest.front() != '{' || rest.back() != '}') return std::nullopt;
    rest = rest.substr(1, rest.size() - 2);
    if (rest.find_first_of("{}") != std::string_view::npos) return std::nullopt;
  } else if (has_hash_tag(key) && looks_like_companion(scheme.prefix, key)) {
    return std::nullopt;
  }
  // An id another program stored in bytes that are not UTF-8 is still an item: found, it is
  // named (export warns), not silently passed over.
  if (!stored_sku_problem(rest, scheme).empty()) return std::nullopt;
  return std::string(rest);
}

std::string escape_glob(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// Keys are built by plain appends, not fmt::format: this runs once or twice per row of a bulk
// load, where formatting would cost more than reading the row.
std::string stock_key(const KeyScheme& scheme, std::string_view sku) {
  std::string key;
  key.reserve(scheme.prefix.size() + sku.size() + 2);
  key += scheme.prefix;
  if (scheme.hashtag) key += '{';
  key += sku;
  if (scheme.hashtag) key += '}';
  return key;
}

std::string companion_key(std::string_view key, std::string_view suffix) {
  const bool tagged = has_hash_tag(key);
  std::string out;
  out.reserve(key.size() + suffix.size() + 2);
  if (!tagged) out += '{';
  out += key;
  if (!tagged) out += '}';
  out += suffix;
  return out;
}

std::string slot_log_key(std::string_view stock_key) {
  std::string key = "stockctl:log:{";
  key += slot_tag(key_slot(stock_key));
  key += '}';
  return key;
}

std::array<std::string, 3> ledger_keys(std::string_view stock_key, long long request_ttl_s,
                                       long long now_s) {
  const long long generation = now_s / request_ttl_s;
  return {ledger_key(stock_key, request_ttl_s, generation),
          ledger_key(stock_key, request_ttl_s, generation - 1),
          ledger_key(stock_key, request_ttl_s, generation + 1)};
}

std::string ledger_key(std::string_view stock_key, long long request_ttl_s, long long generation) {
  std::string suffix(kLedgerSuffix);
  suffix += std::to_string(request_ttl_s);
  suffix += ':';
  suffix += std::to_string(generation);
  return companion_key(stock_key, suffix);
}

std::string validate_request_id(std::string_view id) {
  if (id.empty()) return "a request id cannot be empty";
  if (id.size() > 256) return fmt::format("request id is {} bytes long; at most 256", id.size());
  if (has_control_character(id)) return "request id contains a control character";
  // A retry whose id differs by a space would be another request, applied again.
  if (trim_white_space(id).size() != id.size()) {
    return fmt::format(
        "request id {} has white space at its start or end, which would make it another id "
        "(--trim removes it)",
        quote_value(id));
  }
  return {};
}

std::string rebuild_lock_key(const KeyScheme& scheme) {
  return fmt::format("stockctl:rebuild-lock:{}", scheme.prefix);
}

}  // namespace stockctl
