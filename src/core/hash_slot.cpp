#include "core/hash_slot.h"

#include <array>
#include <vector>

#include "core/sku.h"

namespace stockctl {

namespace {

// CRC16-XMODEM one byte at a time: every call of a cluster bulk run hashes its key, and the
// bit-by-bit loop was a visible part of the client's time.
struct Crc16Table {
  std::array<std::uint16_t, 256> entries{};
  constexpr Crc16Table() {
    for (int byte = 0; byte < 256; ++byte) {
      auto crc = static_cast<std::uint16_t>(byte << 8);
      for (int bit = 0; bit < 8; ++bit) {
        crc = (crc & 0x8000) ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021)
                             : static_cast<std::uint16_t>(crc << 1);
      }
      entries[static_cast<std::size_t>(byte)] = crc;
    }
  }
};

constexpr Crc16Table kCrc16;

}  // namespace

std::uint16_t crc16(std::string_view data) {
  std::uint16_t crc = 0;
  for (unsigned char byte : data) {
    crc = static_cast<std::uint16_t>((crc << 8) ^ kCrc16.entries[((crc >> 8) ^ byte) & 0xff]);
  }
  return crc;
}

int key_slot(std::string_view key) { return crc16(hash_tag(key)) % kClusterSlots; }

// One short hash tag per slot, found once by counting up: the due index of a slot must share
// the slot of the records it lists, a group's record the slot of its lines, and the slot's hash
// of first entries of earlier versions the slot of its items.
const std::string& slot_tag(int slot) {
  static const std::vector<std::string> tags = [] {
    std::vector<std::string> found(kClusterSlots);
    int missing = kClusterSlots;
    for (long n = 0; missing > 0; ++n) {
      std::string tag = std::to_string(n);
      std::string& slot_of_tag = found[static_cast<std::size_t>(key_slot(tag))];
      if (slot_of_tag.empty()) {
        slot_of_tag = std::move(tag);
        --missing;
      }
    }
    return found;
  }();
  return tags.at(static_cast<std::size_t>(slot));
}

}  // namespace stockctl
