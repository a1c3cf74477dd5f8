#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/change_log.h"
#include "redis/client.h"

namespace stockctl {

/// One line of a hold-4002.lua call: the item, its stock key and how many units.
struct HoldCallLine {
  std::string sku;
  std::string key;  ///< the item's stock key
  std::int64_t qty = 0;
  std::string init;  ///< initial stock to create a missing key with; "" = do not create
};

/// One call of lua/hold-4002.lua (its header is the contract): hold or order every line, or none.
struct HoldRequest {
  std::string record;                      ///< the id's record (on a cluster, the slot group's)
  std::string index;                       ///< the index of items with holds
  std::string kind;                        ///< "hold" or "order"
  std::string id;                          ///< the id (on a cluster, the group id ID#SLOT#ATTEMPT)
  long long life_ms = 0;                   ///< a hold: how long it lasts
  long long request_ttl_s = 86400;         ///< how long the record (and so the id) is remembered
  long long ttl_s = 0;                     ///< expiry of stock keys this call creates; 0 = none
  std::vector<HoldCallLine> lines;         ///< distinct items, in the order the caller always sends
  const ChangeLogSettings* log = nullptr;  ///< the change log to write; null or disabled: none
};

/// The per-line keys every hold and settle call sends for an item: stock, holds, held units,
/// and its change log when written.
void append_hold_line_keys(std::vector<std::string>& keys, const std::string& stock, bool log);

/// The call for `request`. Safe to resend (a repeat of the id answers its first answer).
Call hold_call(const HoldRequest& request);

/// One line of the hold script's answer: its code (-3 not initialized, -2 insufficient, -1
/// unlimited, n >= 0 ok) and the stock it reports.
struct HoldLineAnswer {
  std::int64_t code = 0;
  std::int64_t stock = 0;
};

/// The hold script's answer.
struct HoldAnswer {
  bool replayed = false;  ///< a repeat of the id
  std::string since;      ///< a repeat of a hold no longer held: its state ("" otherwise)
  std::int64_t expires_at_ms = 0;
  std::vector<HoldLineAnswer> lines;

  /// Every line held or ordered (ok or unlimited).
  bool all_lines_ok() const;
};

/// Reads the hold script's reply for a call of `lines` lines; nullopt for anything else (an
/// error reply included).
std::optional<HoldAnswer> parse_hold_answer(const Reply& reply, std::size_t lines);

}  // namespace stockctl
