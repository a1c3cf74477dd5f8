#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/hash_slot.h"

namespace stockctl {

/// Which primary serves each slot, as "host:port" ("" for none). Kept as one small index per
/// slot into the few addresses a cluster has: a lookup per call touches 32 KiB, not a string
/// per slot scattered over 512 KiB.
class SlotMap {
 public:
  SlotMap() : addresses_{""}, index_(kClusterSlots, 0) {}

  const std::string& operator[](int slot) const { return addresses_[index_[slot]]; }

  /// The slot's node as a small number (0: none), for callers that keep something per node in
  /// a vector instead of looking the address up for every key; address() names it.
  std::uint16_t node_index(int slot) const { return index_[slot]; }
  const std::string& address(std::uint16_t node) const { return addresses_[node]; }
  /// One more than the largest node_index().
  std::size_t node_count() const { return addresses_.size(); }

  void set(int slot, const std::string& address) { index_[slot] = index_of(address); }

  /// Every address that serves at least one slot.
  std::vector<std::string> addresses() const {
    std::vector<bool> used(addresses_.size(), false);
    for (std::uint16_t i : index_) used[i] = true;
    std::vector<std::string> out;
    for (std::size_t i = 1; i < addresses_.size(); ++i) {
      if (used[i]) out.push_back(addresses_[i]);
    }
    return out;
  }

  /// The first slot no node serves, or -1.
  int first_unserved() const {
    auto it = std::find(index_.begin(), index_.end(), 0);
    return it == index_.end() ? -1 : static_cast<int>(it - index_.begin());
  }

 private:
  std::uint16_t index_of(const std::string& address) {
    auto it = std::find(addresses_.begin(), addresses_.end(), address);
    if (it != addresses_.end()) return static_cast<std::uint16_t>(it - addresses_.begin());
    addresses_.push_back(address);
    return static_cast<std::uint16_t>(addresses_.size() - 1);
  }

  std::vector<std::string> addresses_;  ///< [0] is "": no node
  std::vector<std::uint16_t> index_;    ///< per slot, into addresses_
};

}  // namespace stockctl
