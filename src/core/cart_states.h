#pragma once

#include <optional>
#include <string_view>

namespace stockctl {

// The states of a cluster hold's or order's record (lua/cart-2.lua, which writes them) and
// what each event does to a record in each state: one table, read by the protocol's runner
// (holds/) and checked against every transition by tests/unit/cart_states_test.cpp.

/// A record's state, as cart-2.lua spells it.
enum class CartState {
  missing,    ///< no record (never made, or forgotten after --request-ttl)
  preparing,  ///< an attempt is holding its slot groups
  held,       ///< a hold whose groups are all held, until confirmed, released or expired
  ordered,    ///< an order whose groups are all ordered
  confirmed,  ///< a hold turned into a sale
  released,   ///< a hold given back (release, or cancel of a held hold)
  expired,    ///< a hold past its expiry, given back
  cancelled,  ///< a sale (an order, or a confirmed hold) given back
  aborted,    ///< an attempt that did not hold every group (a short line, or past its deadline)
};

/// The state `word` names, or nullopt for a word cart-2.lua never writes.
std::optional<CartState> parse_cart_state(std::string_view word);

/// The word cart-2.lua writes for `state`.
const char* cart_state_name(CartState state);

/// What happens to a record: the three settle commands, a hold's expiry passing, and an
/// attempt's prepare deadline passing (reap looks at both).
enum class CartEvent { confirm, release, cancel, expiry, deadline };

/// How a settle answers: its script's status word (lua/cart-2.lua, "settle").
enum class SettleAnswer {
  ok,        ///< this call did it
  replayed,  ///< done before: the same answer again, nothing changed ("ok" with replayed = 1)
  expired,   ///< the hold expired first: its units went back
  released,  ///< confirm of a released hold
  conflict,  ///< the action does not apply to the state
  missing,   ///< nothing to act on (no record, an attempt preparing or aborted)
  none,      ///< not a settle (expiry, deadline)
};

/// One cell of the table: the state a record moves to and what a settle answers.
struct CartTransition {
  CartState next;
  SettleAnswer answer;
};

/// What `event` does to a record in `state`. An event that does not apply leaves the state as it
/// is (a settle then answers conflict or missing).
CartTransition cart_transition(CartState state, CartEvent event);

/// What finishing a record's decision does to each of its slot groups.
enum class GroupAction { none, confirm, release, cancel };

/// The settle-4002.lua action word of `action` ("" for none).
const char* group_action_name(GroupAction action);

/// What a record in `state` asks of its groups once decided.
struct GroupFinish {
  GroupAction action = GroupAction::none;
  /// Each group first gets a tombstone where it was never held, so that a prepare of this
  /// attempt still in flight (a paused process) is refused instead of holding units nobody
  /// would give back.
  bool tombstone_first = false;
  /// Settling the groups gives their units back to stock (reap counts them).
  bool gives_back = false;
};

/// The row of the finishing table for `state`. An aborted attempt cancels its groups: a hold's
/// groups are held (cancel gives the units back, as release does), an order's were deducted by
/// their prepare (cancel gives them back as a sale).
GroupFinish group_finish(CartState state);

/// Whether a record in `state` stands for a hold or order that was made (decided, and not
/// aborted), whatever became of it since.
bool cart_made(CartState state);

/// Whether a record in `state` is a hold still held or an order as placed (a repeat of it
/// answers with its expiry and no "state").
bool cart_live(CartState state);

}  // namespace stockctl
