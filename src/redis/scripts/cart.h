#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/cart_states.h"
#include "redis/client.h"

namespace stockctl {

// The scripts of the cluster protocol's records (docs/holds.md): lua/cart-2.lua (the record of
// a hold or order), lua/carts_due-1.lua (reap's list) and lua/tombstone-1.lua (a group an
// aborted attempt never held). Each header is the contract.

/// A call of cart-2.lua: `op` ("intent", "decide", "settle", "reap", "done") on the record of
/// `id` at `record`, whose slot's due index is `due`, with the op's own arguments. Every op is
/// safe to resend (it answers the same when sent again).
Call cart_call(const std::string& record, const std::string& due, const std::string& op,
               const std::string& id, std::vector<std::string> args);

/// The record as cart-2.lua answers it.
struct CartRecord {
  CartState state = CartState::missing;
  std::int64_t attempt = 0;
  std::int64_t exp = 0;
  bool finished = false;
  std::string lines;   ///< as the intent wrote them
  std::string status;  ///< settle: "ok", "expired", "released", "conflict", "missing"
  bool replayed = false;
  std::string conflict;  ///< intent: the error reply when the id is taken
};

/// What cart-2.lua answered: the record, or why the reply is not one (its description).
struct CartReply {
  std::optional<CartRecord> record;
  std::string unexpected;  ///< the reply, described, when it is not the script's answer
};

/// Reads the cart script's reply (a conflict answer is a record with `conflict` set).
CartReply parse_cart_reply(const Reply& reply);

/// A call of carts_due-1.lua: at most `batch` ids of the records due now in the slot of `due`.
Call carts_due_call(const std::string& due, int batch);

/// The ids in the carts_due script's reply; nullopt for another reply.
std::optional<std::vector<std::string>> parse_carts_due(const Reply& reply);

/// A call of tombstone-1.lua on a group's record: writes a tombstone (`canon`, kept `keep_s`
/// seconds, at least a minute) where the group has no record. Safe to resend.
Call tombstone_call(const std::string& group_record, const std::string& canon, long long keep_s);

/// Whether the tombstone script's reply says the group was never held (the tombstone is there:
/// nothing to give back); nullopt for another reply.
std::optional<bool> parse_never_held(const Reply& reply);

}  // namespace stockctl
