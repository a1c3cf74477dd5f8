// The record of a cluster hold or order (lua/cart-2.lua), the keys of the protocol of
// docs/holds.md, and how each of its steps is checked.

#include "holds/cart_record.h"

#include <fmt/format.h>

#include <string_view>

#include "base/text.h"
#include "bulk/replica_ack.h"
#include "core/error_reply.h"
#include "core/hash_slot.h"
#include "core/sku.h"
#include "redis/errors.h"

namespace stockctl {

// One step of the protocol. With --wait-replicas N a step counts only once N replicas have it:
// a failover that lost a decision after some groups were finished would leave a half order, so
// an unacknowledged step stops the run (the same command, or reap, carries it on).
std::string without_outcome(const std::string& error) {
  // Client::run starts the error of a write left without an answer with what became of it.
  for (const char* said : {"not applied: ", "outcome unknown: "}) {
    const std::string_view prefix(said);
    if (error.compare(0, prefix.size(), prefix) == 0) return error.substr(prefix.size());
  }
  return error;
}

void require_durable(const ClientOptions& options, const Call& call, const CallResult& result) {
  if (result.state != CallResult::State::replied) {
    throw StepCutOff(result.state == CallResult::State::unknown, without_outcome(result.error));
  }
  // A reply that says the step did not run (the cluster reconfiguring, a primary loading, ...),
  // still so when the client's retries ran out.
  if (not_executed(result.reply.error_kind())) {
    throw StepCutOff(false, fmt::format("refused before it ran: {}", result.reply.str));
  }
  if (call.writes && !acknowledged(result, options) && !result.reply.is_error()) {
    throw NotDurableError(
        fmt::format("{}; stopped before the next step (run the same command again, or reap)",
                    unacknowledged(result, options)));
  }
}

// Steps of different records (reap) are independent, so they may share one pipeline: the
// replies come back in order, each checked as durable_call checks one.
std::vector<Reply> durable_run(Client& client, const std::vector<Call>& calls) {
  if (calls.empty()) return {};
  std::vector<CallResult> results = client.run(calls);
  std::vector<Reply> replies;
  replies.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    require_durable(client.options(), calls[i], results[i]);
    replies.push_back(std::move(results[i].reply));
  }
  return replies;
}

Reply durable_call(Client& client, const Call& call) {
  return std::move(durable_run(client, {call})[0]);
}

Coordinator::Coordinator(CartStore& store, const std::string& id)
    : client_(store.client),
      id_(id),
      record_(cart_record_key(store.scheme, id)),
      due_(due_key(store.scheme, key_slot(record_))) {}

CartRecord Coordinator::op(const std::string& op, std::vector<std::string> args) {
  const Call sent = call(op, std::move(args));
  std::vector<CallResult> results = client_.run({sent});
  const CallResult& result = results[0];
  const bool refused =
      result.state == CallResult::State::replied && not_executed(result.reply.error_kind());
  if (result.state != CallResult::State::not_sent && !refused) may_have_written_ = true;
  if (result.state != CallResult::State::replied || refused) {
    require_durable(client_.options(), sent, result);  // throws StepCutOff
  }
  last_ = parse(result.reply);
  require_durable(client_.options(), sent, result);
  return last_;
}

Call Coordinator::call(const std::string& op, std::vector<std::string> args) const {
  return cart_call(record_, due_, op, id_, std::move(args));
}

CartRecord Coordinator::parse(const Reply& r) const {
  CartReply reply = parse_cart_reply(r);
  if (!reply.record) {
    throw StockctlError(
        fmt::format("{}: unexpected reply from the cart script: {}", record_, reply.unexpected));
  }
  return std::move(*reply.record);
}

}  // namespace stockctl
