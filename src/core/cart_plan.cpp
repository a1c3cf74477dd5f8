#include "core/cart_plan.h"

#include <algorithm>
#include <map>

namespace stockctl {

std::vector<SlotGroup> group_by_slot(const std::vector<int>& slots) {
  std::map<int, SlotGroup> by_slot;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    SlotGroup& group = by_slot[slots[i]];
    group.slot = slots[i];
    group.lines.push_back(i);
  }
  std::vector<SlotGroup> groups;
  groups.reserve(by_slot.size());
  for (auto& entry : by_slot) groups.push_back(std::move(entry.second));
  return groups;
}

std::string group_hold_id(std::string_view id, int slot, std::int64_t attempt) {
  return std::string(id) + "#" + std::to_string(slot) + "#" + std::to_string(attempt);
}

std::string cart_canon(std::string_view kind, const std::vector<std::string>& keys,
                       const std::vector<std::int64_t>& qtys) {
  std::vector<std::string> parts;
  parts.reserve(keys.size());
  for (std::size_t i = 0; i < keys.size() && i < qtys.size(); ++i) {
    parts.push_back(keys[i] + "\t" + std::to_string(qtys[i]));
  }
  std::sort(parts.begin(), parts.end());
  std::string canon(kind);
  for (const std::string& part : parts) canon += "\n" + part;
  return canon;
}

}  // namespace stockctl
