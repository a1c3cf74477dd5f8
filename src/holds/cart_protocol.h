#pragma once

#include "holds/cart.h"
#include "holds/cart_record.h"
#include "holds/cart_store.h"

namespace stockctl {

class HoldRunner;

/// Holds and orders whose lines span several slots of a Redis Cluster: the protocol of
/// docs/holds.md. A record in the id's slot (lua/cart-2.lua) decides; each slot group of the
/// lines is held by hold-4002.lua under its own id (ID#SLOT#ATTEMPT) with an expiry no node
/// ever reaches, so that only the record's decision moves its units (settle-4002.lua).
class CartProtocol {
 public:
  /// `hooks`: the test-only seam (what runs after each step, the prepare deadline).
  CartProtocol(CartStore& store, CartKind kind, const HoldOptions& o, ProtocolHooks hooks);

  /// Holds or orders one prepared cart: all its lines or none, once per id. A re-run of the
  /// same command resumes (or finishes) whatever an earlier run left. A step that gets no
  /// answer (a node paused or dead past --retry-timeout, a cluster still down) ends the cart as
  /// `error`: "not applied" when nothing of it can have been written, else "outcome unknown"
  /// (and a re-run with the same id finishes it). Throws NotDurableError when a step was not
  /// acknowledged by --wait-replicas replicas: the run stops there.
  void run(Cart& cart);

 private:
  void run_attempts(Cart& cart, Coordinator& coordinator, HoldRunner& groups_runner);
  void keep_expiry_if_made(Cart& cart, const Coordinator& coordinator) const;
  void cut_off(Cart& cart, const Coordinator& coordinator, bool maybe_applied,
               const std::string& why) const;

  CartStore& store_;
  CartKind kind_;
  const HoldOptions& o_;
  ProtocolHooks hooks_;
};

}  // namespace stockctl
