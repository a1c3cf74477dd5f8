#include "core/cart_keys.h"

#include "core/hash_slot.h"

namespace stockctl {
namespace {

/// `{TAG}`: puts a key in the slot of TAG.
std::string braced(std::string_view tag) { return "{" + std::string(tag) + "}"; }

}  // namespace

int cart_slot(std::string_view key) { return key_slot(key); }

std::string cart_record_key(const KeyScheme& scheme, std::string_view id) {
  return "stockctl:cart:" + scheme.prefix + (scheme.hashtag ? braced(id) : std::string(id));
}

std::string due_key(const KeyScheme& scheme, int slot) {
  return "stockctl:carts-due:" + scheme.prefix + braced(slot_tag(slot));
}

std::string due_index_pattern(const KeyScheme& scheme) {
  return "stockctl:carts-due:" + escape_glob(scheme.prefix) + "{*}";
}

std::string group_record_key(const KeyScheme& scheme, int slot, std::string_view gid) {
  return "stockctl:cart-group:" + scheme.prefix + braced(slot_tag(slot)) + ":" + std::string(gid);
}

std::string group_index_key(const KeyScheme& scheme, int slot) {
  return "stockctl:cart-groups:" + scheme.prefix + braced(slot_tag(slot));
}

std::vector<SlotGroup> groups_of(const std::vector<std::string>& keys) {
  std::vector<int> slots;
  slots.reserve(keys.size());
  for (const std::string& key : keys) slots.push_back(key_slot(key));
  return group_by_slot(slots);
}

}  // namespace stockctl
