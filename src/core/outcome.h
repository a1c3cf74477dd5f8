#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stockctl {

/// Every status an item can end in, as the contract names them.
enum class Status {
  ok,
  unlimited,
  insufficient,
  uninitialized,
  missing,
  exists,
  drift,
  extra,    ///< rebuild --extra: Redis holds the item, the source lacks it
  expired,  ///< confirm or release of a hold that expired (or was released)
  busy,
  conflict,
  invalid,
  error,
};

inline constexpr Status kAllStatuses[] = {
    Status::ok,      Status::unlimited, Status::insufficient, Status::uninitialized,
    Status::missing, Status::exists,    Status::drift,        Status::extra,
    Status::expired, Status::busy,      Status::conflict,     Status::invalid,
    Status::error};

/// The contract's name of a status ("ok", "insufficient", ...).
std::string_view status_name(Status status);

/// One bucket of a split item, as get --details prints it (docs/split.md).
struct BucketDetail {
  std::string key;
  std::optional<std::int64_t> stock;  ///< null when it could not be read
  std::string node;                   ///< the primary serving it ("" on one Redis: null)
};

/// What happened to one item: one JSON line of output.
struct ItemResult {
  std::string op;
  std::string sku;
  std::string key;
  std::optional<std::int64_t> qty;  ///< for deduct and add
  bool has_qty = false;             ///< print "qty" (null when invalid)
  Status status = Status::error;
  std::optional<std::int64_t> stock;     ///< current stock after the call; null when unknown
  std::optional<std::int64_t> expected;  ///< rebuild: the export's value, on drift
  /// A forced write (init and rebuild --force) prints "previous": the stored value it replaced
  /// (as stored; nullopt = the key was missing).
  bool forced = false;
  std::optional<std::string> previous;
  std::string error;                        ///< why, for invalid and error
  std::string request_id;                   ///< deduct/add: applied at most once per item and id
  bool replayed = false;                    ///< the answer is the first one recorded for the id
  bool has_held = false;                    ///< get: print "held" (null when unknown)
  std::optional<std::int64_t> held;         ///< get: units in unexpired holds
  bool details = false;                     ///< get --details: print "ttl" and "lock_ttl"
  std::optional<std::int64_t> ttl_s;        ///< seconds until the key expires; null: never, unknown
  std::optional<std::int64_t> lock_ttl_ms;  ///< ms left on a held init lock; null: none
  /// A split item's number of buckets, printed as "buckets" (get, split, deduct, add); 0: the
  /// item is not split, and the field is left out.
  int buckets = 0;
  /// rebalance: the units moved between the item's buckets, printed as "moved" when set.
  std::optional<std::int64_t> moved;
  /// get --details of a split item: each bucket, printed as "bucket_details".
  std::vector<BucketDetail> bucket_details;
  /// What the status alone would hide (kMaybeOwnWrite); printed as "note" when not empty.
  std::string note;
};

/// The note of an item that init or rebuild found already there (`exists`, `drift`, or a forced
/// write's `previous`) on a retry after a try whose outcome was unknown: that try may have
/// written it, and nothing it wrote says which run it was, so it cannot be told from a key
/// that was there before the run.
inline constexpr const char* kMaybeOwnWrite =
    "outcome of an earlier try unknown; the key may be this run's own write";

/// Classifies the deduct script's answer (-3, -2, -1, remaining) with the stock it returned.
void apply_deduct_answer(ItemResult& item, std::int64_t answer, std::int64_t stock);

/// Classifies the add script's answer (-3, -1, new stock).
void apply_add_answer(ItemResult& item, std::int64_t answer, std::int64_t stock);

/// Classifies a stored value for `get`: missing, unlimited, ok, or error when corrupt.
void apply_stored_value(ItemResult& item, const std::optional<std::string>& raw);

/// The item's error as a cart's message gives it: prefixed with "item 'SKU': " unless it names
/// the item already (a split item's refusal does), or no SKU is known.
std::string error_naming_item(const ItemResult& item);

/// Marks an item as failed with a message.
void set_error(ItemResult& item, Status status, std::string message);

/// "not applied: WHY", for a write that certainly did not run. These words and those of
/// outcome_unknown() are put in front of a reason here only, and once: a reason that already
/// begins with either is returned as it is (what became of a write is said once, by the layer
/// that knew it).
std::string not_applied(std::string_view why);
/// "outcome unknown: WHY", for a write that was sent and may have been applied; see
/// not_applied().
std::string outcome_unknown(std::string_view why);

/// Marks an item that was never sent (no connection, or the run was interrupted): status
/// error, "not applied: WHY", no stock.
void set_not_applied(ItemResult& item, const std::string& why);

}  // namespace stockctl

namespace stockctl {

/// The message for a script's STOCKCTL_LOG_LOST <log_key>: the change was made whole, but the
/// item's change log is a key of another type, so its entry was not written.
std::string log_lost_message(std::string_view log_key);

/// The warning for a change that went through whole and whose answer was read again (a hold, a
/// settle): only its change log entry, in `log_key` of another type, is missing.
std::string log_lost_warning(std::string_view log_key);

/// The key a STOCKCTL_LOG_LOST reply names; "" for any other reply.
std::string lost_log_key(std::string_view error_text);

/// The items' prefix, for a message: what stands before a stock key's hash tag, or before the
/// tag of one of stockctl's own keys ("stockctl:hold:<prefix>{ID}"); "" when the key does not say.
std::string_view items_prefix_of(std::string_view key);

/// Turns an error reply of our scripts or of Redis into the item's error status and message.
void apply_error_reply(ItemResult& item, const std::string& error_text);

/// One of an item's keys as TYPE read it after a script answered WRONGTYPE: what it holds and
/// what stockctl keeps there.
struct KeyType {
  std::string key;
  std::string type;      ///< TYPE's answer: "string", "list", "hash", "none", ...
  std::string expected;  ///< the type stockctl keeps there
  std::string what;      ///< what that is, for the message: "a stock value", "a request ledger"
};

/// Names the first key of `keys` (in the order the script reaches them) that holds another type
/// than stockctl keeps there. The scripts meet these keys before they change anything (a log key
/// of another type is STOCKCTL_LOG_LOST instead, once the change is whole), so nothing changed.
/// False, `item` untouched, when every key is as it should be (another program changed it
/// since).
bool apply_wrong_type(ItemResult& item, const std::vector<KeyType>& keys);

}  // namespace stockctl
