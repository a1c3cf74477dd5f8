#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/change_log.h"
#include "redis/client.h"

namespace stockctl {

/// One call of lua/settle-4002.lua (its header is the contract): confirm, release or cancel the
/// hold or order whose record is `record`, whose lines have these stock keys (in the record's
/// order).
struct SettleRequest {
  std::string record;
  std::string index;
  std::string action;  ///< "confirm", "release" or "cancel"
  std::string id;
  std::vector<std::string> stock_keys;
  const ChangeLogSettings* log = nullptr;  ///< the change log to write; null or disabled: none
};

/// The call for `request`. Safe to resend (a repeat answers "ok", replayed).
Call settle_call(const SettleRequest& request);

/// The settle script's answer.
/// A line's stock in the settle script's answer when its stock key is missing.
inline constexpr std::int64_t kStockMissing = -3;

struct SettleReply {
  std::string status;  ///< "ok", "expired", "released", "removed", "conflict" or "missing"
  bool replayed = false;
  /// "removed": the line (from 0) whose held units were gone, so that the hold was released
  /// instead of confirmed.
  std::size_t removed_line = 0;
  /// Each line's stock after the call (-1 unlimited, -3 missing); none for "missing".
  std::vector<std::int64_t> stocks;
};

/// Reads the settle script's reply; nullopt for anything else (an error reply included).
std::optional<SettleReply> parse_settle_reply(const Reply& reply);

}  // namespace stockctl
