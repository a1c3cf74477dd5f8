#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bulk/adjust_runner.h"
#include "core/outcome.h"
#include "holds/cart.h"
#include "holds/cart_store.h"
#include "holds/settle_answer.h"

namespace stockctl {

/// Runs hold-4002.lua for carts (each cart's record_key/index_key/id as given), with the init
/// lock protocol for lines whose key is missing.
class HoldRunner {
 public:
  /// `expire_ms`: how long the holds it makes last (an order's are never held).
  HoldRunner(CartStore& store, CartKind kind, const HoldOptions& o, long long expire_ms);

  /// Holds or orders each prepared cart (invalid ones are left as they are).
  void run(std::vector<Cart>& carts);

  /// With --wait-replicas: a cart held on the primary but acknowledged by fewer replicas is an
  /// error (the cluster protocol aborts such a group rather than decide on it).
  void require_acks() { require_acks_ = true; }

 private:
  Call call_for(const Cart& cart, const std::vector<std::string>& inits) const;
  void apply(Cart& cart, const CallResult& result) const;
  /// `result`, or the answer of the same call sent again when `result` says the script met a
  /// change log of another type: the change was whole, and the repeat reads its answer.
  CallResult past_lost_log(const Cart& cart, CallResult result, bool& lost) const;
  void apply_error(Cart& cart, const std::string& text) const;
  /// A key of another type than stockctl keeps there, and its line (the number of lines for
  /// the index of items with holds).
  struct KeyOfAnotherType {
    std::size_t line;
    KeyType key;
  };
  /// The first key hold-4002.lua reads that holds another type, read after a WRONGTYPE.
  std::optional<KeyOfAnotherType> key_of_another_type(const Cart& cart) const;
  void check_acks(Cart& cart, const CallResult& result) const;
  void initialize(Cart& cart);

  CartStore& store_;
  CartKind kind_;
  const HoldOptions& o_;
  long long expire_ms_;
  InitialStock initial_;
  bool require_acks_ = false;
};

/// The call of settle-4002.lua for `action` on the record at `record` with these lines.
Call record_settle_call(const ChangeLogSettings& log, const std::string& record,
                        const std::string& index, const std::string& action, const std::string& id,
                        const std::vector<RecordLine>& lines);

}  // namespace stockctl
