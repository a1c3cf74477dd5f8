#include "core/cart_states.h"

#include <array>
#include <cstddef>

namespace stockctl {
namespace {

constexpr std::array<std::string_view, 9> kStateNames = {"missing", "preparing", "held",
                                                         "ordered", "confirmed", "released",
                                                         "expired", "cancelled", "aborted"};

using S = CartState;
using A = SettleAnswer;

/// The settle table: one row per state, one column per command (confirm, release, cancel), as
/// lua/cart-2.lua applies them.
struct SettleRow {
  CartState state;
  CartTransition confirm, release, cancel;
};

constexpr std::array<SettleRow, 9> kSettles = {{
    {S::missing, {S::missing, A::missing}, {S::missing, A::missing}, {S::missing, A::missing}},
    {S::preparing,
     {S::preparing, A::missing},
     {S::preparing, A::missing},
     {S::preparing, A::missing}},
    {S::held, {S::confirmed, A::ok}, {S::released, A::ok}, {S::released, A::ok}},
    {S::ordered, {S::ordered, A::conflict}, {S::ordered, A::conflict}, {S::cancelled, A::ok}},
    {S::confirmed, {S::confirmed, A::replayed}, {S::confirmed, A::conflict}, {S::cancelled, A::ok}},
    {S::released,
     {S::released, A::released},
     {S::released, A::replayed},
     {S::released, A::replayed}},
    {S::expired, {S::expired, A::expired}, {S::expired, A::expired}, {S::expired, A::expired}},
    {S::cancelled,
     {S::cancelled, A::conflict},
     {S::cancelled, A::conflict},
     {S::cancelled, A::replayed}},
    {S::aborted, {S::aborted, A::missing}, {S::aborted, A::missing}, {S::aborted, A::missing}},
}};

/// The finishing table: what a decided record asks of its groups.
constexpr std::array<GroupFinish, 9> kFinishes = {{
    {GroupAction::none, false, false},     // missing
    {GroupAction::none, false, false},     // preparing: nothing decided yet
    {GroupAction::none, false, false},     // held: the groups are held already
    {GroupAction::confirm, false, false},  // ordered (a record of the previous version only)
    {GroupAction::confirm, false, false},  // confirmed
    {GroupAction::release, true, true},    // released
    {GroupAction::release, true, true},    // expired
    {GroupAction::cancel, false, false},   // cancelled
    {GroupAction::cancel, true, true},     // aborted
}};

std::size_t index_of(CartState state) { return static_cast<std::size_t>(state); }

// Both tables are indexed by the state's value: each row must sit at its state's place.
constexpr bool rows_in_order() {
  for (std::size_t i = 0; i < kSettles.size(); ++i) {
    if (static_cast<std::size_t>(kSettles[i].state) != i) return false;
  }
  return kSettles.size() == kStateNames.size() && kFinishes.size() == kStateNames.size();
}
static_assert(rows_in_order(), "kSettles must list the states in CartState's order");

}  // namespace

std::optional<CartState> parse_cart_state(std::string_view word) {
  for (std::size_t i = 0; i < kStateNames.size(); ++i) {
    if (kStateNames[i] == word) return static_cast<CartState>(i);
  }
  return std::nullopt;
}

const char* cart_state_name(CartState state) { return kStateNames[index_of(state)].data(); }

CartTransition cart_transition(CartState state, CartEvent event) {
  const SettleRow& row = kSettles[index_of(state)];
  switch (event) {
    case CartEvent::confirm:
      return row.confirm;
    case CartEvent::release:
      return row.release;
    case CartEvent::cancel:
      return row.cancel;
    case CartEvent::expiry:
      return {state == S::held ? S::expired : state, A::none};
    case CartEvent::deadline:
      return {state == S::preparing ? S::aborted : state, A::none};
  }
  return {state, A::none};
}

const char* group_action_name(GroupAction action) {
  switch (action) {
    case GroupAction::confirm:
      return "confirm";
    case GroupAction::release:
      return "release";
    case GroupAction::cancel:
      return "cancel";
    case GroupAction::none:
      break;
  }
  return "";
}

GroupFinish group_finish(CartState state) { return kFinishes[index_of(state)]; }

bool cart_made(CartState state) {
  return state != S::missing && state != S::preparing && state != S::aborted;
}

bool cart_live(CartState state) { return state == S::held || state == S::ordered; }

}  // namespace stockctl
