#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/errors.h"
#include "core/cart_keys.h"
#include "core/cart_states.h"
#include "holds/cart_store.h"
#include "redis/client.h"
#include "redis/errors.h"
#include "redis/scripts/cart.h"

namespace stockctl {

/// A step of the protocol applied on the primary but acknowledged by fewer replicas than
/// --wait-replicas asks for: the run of that cart stops there (a re-run or reap carries it on).
class NotDurableError : public StockctlError {
 public:
  using StockctlError::StockctlError;
};

/// A step of the protocol left without an answer, or refused before it ran (CLUSTERDOWN,
/// TRYAGAIN, LOADING, ... still so when --retry-timeout ran out): whether it may have been
/// applied, and why it got no answer.
class StepCutOff : public ConnectionError {
 public:
  StepCutOff(bool maybe_applied, std::string reason)
      : ConnectionError(reason), maybe_applied_(maybe_applied), reason_(std::move(reason)) {}
  /// False when the step certainly did not run (never sent, or refused before it ran).
  bool maybe_applied() const { return maybe_applied_; }
  /// Why, without "not applied" or "outcome unknown": the caller says which for the whole cart.
  const std::string& reason() const { return reason_; }

 private:
  bool maybe_applied_;
  std::string reason_;
};

/// `error` without the "not applied: " or "outcome unknown: " that Client::run puts in front of
/// the error of a write left without an answer: the reason alone, for a message that says itself
/// what became of the whole cart.
std::string without_outcome(const std::string& error);

/// Checks one step of the protocol: throws StepCutOff when it got no reply, and
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

  /// Whether an op of this coordinator may have written (one was answered, or got no answer
  /// after it was sent): until then nothing of the id was changed.
  bool may_have_written() const { return may_have_written_; }

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
  bool may_have_written_ = false;
};

}  // namespace stockctl
