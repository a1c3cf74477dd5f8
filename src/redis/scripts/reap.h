#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/change_log.h"
#include "redis/client.h"

namespace stockctl {

/// A call of lua/reap-1.lua (its header is the contract): gives back the units of the expired
/// holds of at most `batch` items of the holds index `index` (one Redis). Safe to resend.
Call reap_call(const std::string& index, int batch, const ChangeLogSettings& log);

/// The reap script's answer.
struct ReapReply {
  std::int64_t units = 0;        ///< units given back by this call
  bool more = false;             ///< items with expired holds may remain: call again
  std::vector<std::string> ids;  ///< the holds expired by this call, each once
  /// Per item whose stock key was missing, its key and the units given back (in `units`),
  /// which went nowhere.
  std::vector<std::pair<std::string, std::int64_t>> nowhere;
  /// The stock keys whose stored value is not a stock value: their expired holds stay held.
  std::vector<std::string> kept;
};

/// Reads the reap script's reply; nullopt for anything else (an error reply included).
std::optional<ReapReply> parse_reap_reply(const Reply& reply);

}  // namespace stockctl
