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
};

/// The call for `request`. It sends only the keys it needs, in the script's KEYS order: the
/// stock key, the request ledger only with a request id, the change log only when written.
/// Sending no key the call does not need keeps it a single-key command on a cluster: while its
/// slot migrates it follows ASK at once instead of being answered TRYAGAIN until the whole slot
/// has moved. A call with a request id is safe to resend (the ledger answers a repeat).
Call stock_call(const StockRequest& request);

/// The stock script's answer: {answer, stock, replayed} (see core/outcome.h for the codes).
struct StockAnswer {
  std::int64_t answer = 0;
  std::int64_t stock = 0;
  bool replayed = false;
};

/// Reads a non-error reply of the stock script; nullopt when it has another shape.
std::optional<StockAnswer> parse_stock_answer(const Reply& reply);

}  // namespace stockctl
