#include "core/cart_states.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace stockctl;

namespace {

using S = CartState;
using E = CartEvent;
using A = SettleAnswer;

struct Cell {
  S state;
  E event;
  S next;
  A answer;
};

// Every cell of the table, as lua/cart-2.lua applies the ops (its "settle" branch, and the
// expiry of a held record and reap's abort of an attempt past its deadline).
const std::vector<Cell> kEveryTransition = {
    {S::missing, E::confirm, S::missing, A::missing},
    {S::missing, E::release, S::missing, A::missing},
    {S::missing, E::cancel, S::missing, A::missing},
    {S::missing, E::expiry, S::missing, A::none},
    {S::missing, E::deadline, S::missing, A::none},
    {S::preparing, E::confirm, S::preparing, A::missing},
    {S::preparing, E::release, S::preparing, A::missing},
    {S::preparing, E::cancel, S::preparing, A::missing},
    {S::preparing, E::expiry, S::preparing, A::none},
    {S::preparing, E::deadline, S::aborted, A::none},
    {S::held, E::confirm, S::confirmed, A::ok},
    {S::held, E::release, S::released, A::ok},
    {S::held, E::cancel, S::released, A::ok},
    {S::held, E::expiry, S::expired, A::none},
    {S::held, E::deadline, S::held, A::none},
    {S::ordered, E::confirm, S::ordered, A::conflict},
    {S::ordered, E::release, S::ordered, A::conflict},
    {S::ordered, E::cancel, S::cancelled, A::ok},
    {S::ordered, E::expiry, S::ordered, A::none},
    {S::ordered, E::deadline, S::ordered, A::none},
    {S::confirmed, E::confirm, S::confirmed, A::replayed},
    {S::confirmed, E::release, S::confirmed, A::conflict},
    {S::confirmed, E::cancel, S::cancelled, A::ok},
    {S::confirmed, E::expiry, S::confirmed, A::none},
    {S::confirmed, E::deadline, S::confirmed, A::none},
    {S::released, E::confirm, S::released, A::released},
    {S::released, E::release, S::released, A::replayed},
    {S::released, E::cancel, S::released, A::replayed},
    {S::released, E::expiry, S::released, A::none},
    {S::released, E::deadline, S::released, A::none},
    {S::expired, E::confirm, S::expired, A::expired},
    {S::expired, E::release, S::expired, A::expired},
    {S::expired, E::cancel, S::expired, A::expired},
    {S::expired, E::expiry, S::expired, A::none},
    {S::expired, E::deadline, S::expired, A::none},
    {S::cancelled, E::confirm, S::cancelled, A::conflict},
    {S::cancelled, E::release, S::cancelled, A::conflict},
    {S::cancelled, E::cancel, S::cancelled, A::replayed},
    {S::cancelled, E::expiry, S::cancelled, A::none},
    {S::cancelled, E::deadline, S::cancelled, A::none},
    {S::aborted, E::confirm, S::aborted, A::missing},
    {S::aborted, E::release, S::aborted, A::missing},
    {S::aborted, E::cancel, S::aborted, A::missing},
    {S::aborted, E::expiry, S::aborted, A::none},
    {S::aborted, E::deadline, S::aborted, A::none},
};

const std::vector<S> kAllStates = {S::missing, S::preparing, S::held,
                                   S::ordered, S::confirmed, S::released,
                                   S::expired, S::cancelled, S::aborted};

}  // namespace

TEST_CASE("every state by every event moves and answers as cart-2.lua does") {
  REQUIRE(kEveryTransition.size() == kAllStates.size() * 5);
  for (const Cell& cell : kEveryTransition) {
    CAPTURE(cart_state_name(cell.state));
    CAPTURE(static_cast<int>(cell.event));
    const CartTransition t = cart_transition(cell.state, cell.event);
    CHECK(t.next == cell.next);
    CHECK(t.answer == cell.answer);
  }
}

TEST_CASE("state names read back as their states, and unknown words are no state") {
  for (S state : kAllStates) CHECK(parse_cart_state(cart_state_name(state)) == state);
  CHECK(std::string(cart_state_name(S::cancelled)) == "cancelled");
  CHECK_FALSE(parse_cart_state("done"));
  CHECK_FALSE(parse_cart_state(""));
  CHECK_FALSE(parse_cart_state("Held"));
}

TEST_CASE("finishing drives the groups to the record's decision") {
  struct Row {
    S state;
    GroupAction action;
    bool tombstone_first;
    bool gives_back;
  };
  const std::vector<Row> rows = {
      {S::missing, GroupAction::none, false, false},
      {S::preparing, GroupAction::none, false, false},
      {S::held, GroupAction::none, false, false},
      {S::ordered, GroupAction::confirm, false, false},
      {S::confirmed, GroupAction::confirm, false, false},
      {S::released, GroupAction::release, true, true},
      {S::expired, GroupAction::release, true, true},
      {S::cancelled, GroupAction::cancel, false, false},
      // An aborted attempt cancels its groups (an order's were deducted by their prepare):
      // "release" would leave an order's units sold.
      {S::aborted, GroupAction::cancel, true, true},
  };
  REQUIRE(rows.size() == kAllStates.size());
  for (const Row& row : rows) {
    CAPTURE(cart_state_name(row.state));
    const GroupFinish finish = group_finish(row.state);
    CHECK(finish.action == row.action);
    CHECK(finish.tombstone_first == row.tombstone_first);
    CHECK(finish.gives_back == row.gives_back);
  }
  CHECK(std::string(group_action_name(GroupAction::cancel)) == "cancel");
  CHECK(std::string(group_action_name(GroupAction::none)).empty());
}

TEST_CASE("made and live tell a decided record from an attempt, and a live one from the rest") {
  for (S state : kAllStates) {
    CAPTURE(cart_state_name(state));
    const bool made = state != S::missing && state != S::preparing && state != S::aborted;
    CHECK(cart_made(state) == made);
    CHECK(cart_live(state) == (state == S::held || state == S::ordered));
  }
}
