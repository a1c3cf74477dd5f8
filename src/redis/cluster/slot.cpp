#include "redis/cluster/slot.h"

#include "core/sku.h"

namespace stockctl {

std::uint16_t crc16(std::string_view data) {
  std::uint16_t crc = 0;
  for (unsigned char byte : data) {
    crc = static_cast<std::uint16_t>(crc ^ (byte << 8));
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<std::uint16_t>(crc << 1);
    }
  }
  return crc;
}

int key_slot(std::string_view key) { return crc16(hash_tag(key)) % kClusterSlots; }

}  // namespace stockctl
