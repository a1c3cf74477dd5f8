#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stockctl {

/// How this run writes items' change logs (--no-log, --log-max, --actor, --reason).
struct ChangeLogSettings {
  bool enabled = true;
  long long max_entries = 1000;  ///< per item, trimmed approximately (lua/include/log_entry.lua)
  std::string actor;
  std::string reason;  ///< "" = none
};

/// One entry of an item's change log, as read back from its list, its slot's hash or (written
/// by earlier versions) its stream.
struct LogEntry {
  std::string
      id;  ///< "<ms>-<n>": n counts the item's entries (a stream's "<ms>-<seq>" for old ones)
  std::int64_t time_ms = 0;
  std::string change;  ///< deduct, add, init, rebuild, overwrite
  std::optional<std::int64_t> qty;
  std::optional<std::int64_t> before;  ///< null when the key was missing
  std::optional<std::int64_t> after;
  std::optional<std::string> request_id;
  std::optional<std::string> hold_id;
  std::optional<std::string> actor;
  std::optional<std::string> reason;
};

/// A stream entry's fields, as XRANGE returns them: name, value, name, value, ...
using StreamFields = std::vector<std::pair<std::string, std::string>>;

/// Reads one stream entry written by the scripts. Unknown fields are ignored; an empty field
/// (the scripts write "" where one does not apply) and a number field that is not a decimal
/// integer are null.
LogEntry parse_log_entry(const std::string& id, const StreamFields& fields);

/// Reads one entry as lua/include/log_entry.lua packs it: "<ms>-<n>" US change US qty US before
/// US after US request US hold US <bytes of actor> US actor reason (US = \x1f). Empty fields and
/// number fields that are not decimal integers are null. nullopt when `packed` is not such an
/// entry.
std::optional<LogEntry> parse_packed_log_entry(std::string_view packed);

/// Reads an item's first entry as lua/include/log_entry.lua packs it in the item's first key
/// (<stock key>:first): "<ms>" US change US after US <bytes of actor> US actor reason. Its id
/// is "<ms>-0"; qty, before, request and hold are null. nullopt when `packed` is not one.
std::optional<LogEntry> parse_first_log_entry(std::string_view packed);

/// The first entry of each item a load creates, packed as lua/include/log_entry.lua packs one
/// in the item's first key (parse_first_log_entry reads it back). Everything but the stock is
/// the load's own, so it is packed once.
class LoadEntryPacker {
 public:
  LoadEntryPacker(std::int64_t ms, std::string_view change, const ChangeLogSettings& log);
  /// The entry of an item created with `after` units.
  std::string entry(std::int64_t after) const;

 private:
  std::string head_;  ///< "<ms>" US change US
  std::string tail_;  ///< US <bytes of actor> US actor reason
};

/// Places `first_entry` (the entry a load wrote in the item's first key, or an earlier
/// version in its slot's hash) among `entries` (oldest first) before the first one written at
/// its time or later. It is the item's first entry unless its key was lost while its list
/// stayed and a load created it again (lua/include/log_entry.lua): then it belongs where its
/// time says.
void place_first_entry(std::vector<LogEntry>& entries, LogEntry first_entry);

/// Parses --since: epoch milliseconds ("1764536400000") or ISO 8601 UTC or with an offset
/// ("2026-11-30T21:00:00Z", "2026-11-30T22:00:00.5+01:00", "2026-11-30"). Returns nullopt and
/// sets `error` when the text is neither.
std::optional<std::int64_t> parse_log_time(std::string_view text, std::string& error);

/// Epoch milliseconds as ISO 8601 UTC with milliseconds ("2026-11-30T21:00:00.000Z"), the form
/// --since reads back.
std::string format_log_time(std::int64_t time_ms);

}  // namespace stockctl
