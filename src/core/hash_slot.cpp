#include "core/hash_slot.h"

#include <array>

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

}  // namespace stockctl
