#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "holds/cart_record.h"
#include "holds/cart_store.h"
#include "holds/settle_answer.h"

namespace stockctl {

/// How long a record that has no --request-ttl of its own (a tombstone written by reap or
/// release) is kept.
inline constexpr long long kDefaultKeepS = 86400;

/// What finishing did.
struct Finish {
  std::vector<std::optional<std::int64_t>> stocks;  ///< per line, after its group's settle
  std::int64_t units_back = 0;                      ///< units this call gave back to stock
  /// The lines whose units this call gave back while their stock key was missing: they went
  /// back nowhere (the key was deleted or evicted under the hold).
  std::vector<std::size_t> nowhere;
  /// A change log of another type that a group's settle skipped (STOCKCTL_LOG_LOST): the settle
  /// was applied whole, its entry not written, and its lines' stocks not read; "" when none.
  std::string lost_log;
};

/// One slot group of a record, as finishing it needs.
struct GroupStep {
  std::string gid;
  std::string record;
  std::string index;
  std::vector<std::size_t> lines;  ///< the record's lines in this group
  std::vector<RecordLine> group_lines;
};

/// The slot groups of attempt `attempt` of record `id` with these lines.
std::vector<GroupStep> group_steps(const KeyScheme& scheme, const std::string& id,
                                   std::int64_t attempt, const std::vector<RecordLine>& lines);

/// The call that writes a tombstone on a group before it is given back, where the group has no
/// record (tombstone-1.lua), so that a prepare of it still in flight is refused.
Call group_tombstone_call(const std::string& record, long long keep_s);

/// Whether the tombstone's reply says the group was never held (nothing to give back); throws
/// StockctlError for another reply.
bool never_held_reply(const std::string& record, const Reply& r);

/// Reads a settle script's answer for a group: its lines' stocks after it (into `stocks`), and
/// the units it gave back now (into `units_back`, when `back`), and, when given `nowhere` (the
/// settle gives units back to stock), the lines it settled now whose stock key was missing. Throws
/// StockctlError naming the item when a stored value is corrupt, and for a reply that is not the
/// script's.
void read_settle(const GroupStep& step, bool back, const Reply& r,
                 std::vector<std::optional<std::int64_t>>& stocks, std::int64_t& units_back,
                 std::vector<std::size_t>* nowhere = nullptr);

/// The EXPIRE that keeps a finished group's record `keep_s` seconds (for replays).
Call keep_call(const std::string& record, long long keep_s);

/// Drives every group of the record to its state (group_finish of core/cart_states.h), each
/// step idempotent, then marks the record done. Throws as durable_call does.
Finish finish_groups(CartStore& store, const std::string& id, const CartRecord& rec,
                     const std::vector<RecordLine>& lines, long long keep_s,
                     const ProtocolHooks& hooks);

/// Fills in the stocks a finish did not read (a replayed or refused settle): one GET per line.
void read_missing_stocks(Client& client, const std::vector<RecordLine>& lines,
                         std::vector<std::optional<std::int64_t>>& stocks);

}  // namespace stockctl
