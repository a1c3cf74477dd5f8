#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/errors.h"
#include "core/cart_keys.h"
#include "core/cart_states.h"
#include "holds/cart_store.h"
#include "redis/client.h"
#include "redis/scripts/cart.h"

namespace stockctl {

/// A step of the protocol applied on the primary but acknowledged by fewer replicas than
/// --wait-replicas asks for: the run of that cart stops there (a re-run or reap carries it on).
class NotDurableError : public StockctlError {
 public:
  using StockctlError::StockctlError;
};

/// Checks one step of the protocol: throws ConnectionError when it got no reply, and
/// NotDurableError when it wrote on the primary but fewer replicas than --wait-replicas
/// acknowledged it (a failover could lose it: the next step must not build on it).
void require_durable(const ClientOptions& options, const Call& call, const CallResult& result);

/// Runs steps of independent records in one pipeline, each checked as require_durable does;
/// returns their replies in order.
std::vector<Reply> durable_run(Client& client, const std::vector<Call>& calls);

/// One step, checked as require_durable does; returns its reply.
Reply durable_call(Client& client, const Call& call);

/// The calls of cart-2.lua for one id.
class Coordinator {
 public:
  Coordinator(CartStore& store, const std::string& id);

  /// The record after `op`; throws NotDurableError as durable_call does, after last() has
  /// taken the record the primary answered.
  CartRecord op(const std::string& op, std::vector<std::string> args);

  /// The record as the last op answered it (applied on the primary, even when not durable).
  const CartRecord& last() const { return last_; }

  /// The call of `op` for this id (reap sends many in one pipeline).
  Call call(const std::string& op, std::vector<std::string> args) const;

  /// The record in a reply of the cart script; throws StockctlError for another reply.
  CartRecord parse(const Reply& r) const;

 private:
  Client& client_;
  std::string id_;
  std::string record_;
  std::string due_;
  CartRecord last_;
};

}  // namespace stockctl
