#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stockctl {

/// Number of hash slots in a Redis Cluster.
inline constexpr int kClusterSlots = 16384;

/// CRC16-XMODEM, the checksum Redis Cluster hashes keys with.
std::uint16_t crc16(std::string_view data);

/// The hash slot of `key`: CRC16 of its hash tag (the first non-empty {...}), else of the key.
int key_slot(std::string_view key);

/// A short hash tag whose slot is `slot` (0 .. 16383): `{TAG}` puts a key in that slot.
const std::string& slot_tag(int slot);

}  // namespace stockctl
