#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/change_log.h"
#include "redis/client.h"

namespace stockctl {

/// One call of the stock script, lua/stock-2.lua (its header is the contract): deduct or add.
struct StockRequest {
  std::string key;  ///< the item's stock key
  std::string op;   ///< "deduct" or "add"
  std::int64_t qty = 0;
  std::string init;                        ///< initial stock for a missing key; "" = do not create
  long long ttl_s = 0;                     ///< expiry of a key this call creates; 0 = none
  std::string request_id;                  ///< "" = none
  long long request_ttl_s = 86400;         ///< how long the ledger remembers the id
  const ChangeLogSettings* log = nullptr;  ///< the change log to write; null or disabled: none
  long long now_s = 0;  ///< Unix time that picks the ledger's generation; 0 = this machine's clock
  /// A deduction with an id that finds too little answers -2 without recording it, so that the
  /// same id may try again: a split item's bucket, whose sum may still cover QTY (docs/split.md).
  bool short_unrecorded = false;
};

/// The call for `request`. It sends only the keys it needs, in the script's KEYS order: the
/// stock key, the ledger's current, previous and next generations only with a request id, the
/// change log only when written. Sending no key the call does not need keeps it a single-key
/// command on a cluster: while its slot migrates it follows ASK at once instead of being answered
/// TRYAGAIN until the whole slot has moved. A call with a request id is safe to resend (the ledger
/// answers a repeat).
Call stock_call(const StockRequest& request);

/// The stock script's answer: the classic answer (-3, -2, -1 or the stock left), the stock
/// after the call, and whether it is a repeated request id's first answer (core/outcome.h).
struct StockAnswer {
  std::int64_t answer = 0;
  std::int64_t stock = 0;
  bool replayed = false;
};

/// Reads the stock script's reply: an integer when the answer is the stock itself, else
/// {answer, stock, replayed}. nullopt for anything else (an error reply included).
std::optional<StockAnswer> parse_stock_answer(const Reply& reply);

}  // namespace stockctl
