#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/change_log.h"
#include "core/rebuild_plan.h"
#include "redis/client.h"

namespace stockctl {

/// One call of the put script, lua/put-2.lua (its header is the contract): store one item's
/// stock for init and rebuild, honouring the item's init lock. The script first gives back the
/// item's expired holds; with `counts_held` it stores `value` less the units still held.
struct PutRequest {
  std::string key;           ///< the item's stock key
  std::int64_t value = 0;    ///< -1 = unlimited
  bool counts_held = false;  ///< `value` counts held units (total - issued): leave them out
  PutMode mode;
  long long ttl_s = 0;                     ///< expiry of the stored key; 0 = none
  const ChangeLogSettings* log = nullptr;  ///< the change log to write; null or disabled: none
  std::string change;                      ///< the logged change: "init" or "rebuild"
};

/// The call for `request`: the stock key and its init lock, then the change log when it is
/// written (never on a dry run). Storing a given value is idempotent: sending it again can at
/// most turn "created" into "kept", so the call is safe to resend.
Call put_call(const PutRequest& request);

/// One row of a load call: a stock key and the value to create it with.
struct LoadRow {
  std::string key;
  std::int64_t value = 0;
};

/// One call of the load script, lua/load-2.lua: SET NX of every row's key, each key created
/// with its first change log entry (`change`): in its first key (first_log_key), or with
/// `ttl_s` in its own list, which expires with it. On a cluster the rows must share a hash
/// slot.
/// Safe to resend as SET NX is: a key created by the first send answers 0 the second time.
Call load_call(const std::vector<LoadRow>& rows, long long ttl_s, const ChangeLogSettings& log,
               const std::string& change);

/// The put script's answer: its verdict, the value stored before the call, and the units of the
/// item's live holds it left out of the value (0 unless the request counts held units).
struct PutAnswer {
  std::string verdict;  ///< "created", "kept", "replaced", "absent" or "locked"
  std::optional<std::string> previous;
  std::int64_t held = 0;
};

/// Reads a non-error reply of the put script; nullopt when it has another shape.
std::optional<PutAnswer> parse_put_answer(const Reply& reply);

/// The stock the put script stores for `value` when `held` units are in live holds: `value`
/// less them, never below 0; unlimited (-1) stays unlimited.
std::int64_t stock_less_held(std::int64_t value, std::int64_t held);

}  // namespace stockctl
