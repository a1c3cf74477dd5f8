#pragma once

// Split and merge items (docs/split.md, "States of a split or merge"), and read a split item's
// buckets: the engine behind `split`, and what `get`, `deduct` and `add` use on a split item.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/change_log.h"
#include "core/outcome.h"
#include "core/split_layout.h"
#include "redis/client.h"
#include "redis/scripts/split.h"

namespace stockctl {

/// Test-only crash points (STOCKCTL_TEST_STOP_AT=split:STEP, CONTRIBUTING.md): the process
/// kills itself with SIGKILL right after STEP, as a crash there would, so that the tests can
/// run the same command again from every state a split, a merge or a transfer passes through.
void stop_split_if_asked(const std::string& step);

/// The primaries' slot ranges, from CLUSTER SLOTS on a cluster; empty on one Redis. Throws
/// ConnectionError when the cluster cannot be read.
std::vector<SlotRange> read_slot_ranges(Client& client, bool cluster);

/// A new layout's generation: 8 random lower-case hex digits.
std::string new_generation();

/// The stock value a GET answered (nullopt: none, an error, or not a stock value of 0 or more).
std::optional<std::int64_t> stock_in_bucket(const CallResult& result);

/// Why a bucket of the live `layout` of item `sku` (stock key `stock_key`) cannot be used: the
/// first one missing or holding what is not a stock value (nor a drained bucket's record), as
/// an error message; nullopt when every bucket reads well (or a read got no answer). Callers ask
/// only once the layout record was read again unchanged, when no split or merge can explain it.
std::optional<std::string> bad_bucket_problem(Client& client, const std::string& stock_key,
                                              const BucketLayout& layout, const std::string& sku);

/// The stock of each bucket of `layout` (null where a bucket is missing, holds something else
/// or could not be read), read pipelined. Each read is its own moment. With `unread`: set to
/// why a bucket could not be read at all (no reply, an error reply), which is not a layout
/// change; left as it is otherwise.
std::vector<std::optional<std::int64_t>> read_bucket_stocks(Client& client,
                                                            const std::string& stock_key,
                                                            const BucketLayout& layout,
                                                            std::string* unread = nullptr);

/// Fills in `item` (get) for a split item whose stock key holds `record`: the sum of its
/// buckets as `stock`, their number as `buckets`, and with item.details each bucket's key,
/// stock and node (from `ranges`). An item being split or merged is an error naming the state;
/// a bucket that cannot be read makes the item an error.
void read_split_item(Client& client, ItemResult& item, const std::string& record,
                     const std::vector<SlotRange>& ranges);

/// Finishes the transfer recorded at bucket `from` as field `field` ("out:<id>") with `value`
/// ("<units> <destination bucket>"), which another process may have sent: the record is
/// confirmed on `from`'s replicas first, then the destination receives the units (once), the
/// record goes, and the receipt is given its expiry. Returns "" (also when the record was gone
/// already) or why it could not be finished (nothing is lost: the record stays).
std::string finish_transfer(Client& client, const std::string& from, const std::string& field,
                            const std::string& value);

/// The stored value of `item`'s stock key into `stored` (nullopt: missing); false, with the
/// item's error set, when it could not be read.
bool read_stored_value(Client& client, ItemResult& item, std::optional<std::string>& stored);

/// Logs one "rebalance" entry on `item`'s key (rebalance_entry_call; nothing when `log` is
/// off): `moved` units went between its buckets, its total then `total`, for the deduction with
/// `request_id` ("": a rebalance). The units moved whatever the log says, so a failed entry is
/// a warning, "item 'SKU': <what>: <why>".
void log_rebalance_entry(Client& client, const ItemResult& item, std::int64_t moved,
                         std::optional<std::int64_t> total, const ChangeLogSettings& log,
                         const std::string& request_id, const std::string& what);

/// How a transfer between two buckets ended.
enum class TransferResult {
  moved,            ///< the units left `from`, arrived at `to`, and the record is gone
  short_at_source,  ///< `from` held fewer units (buyers took them): nothing changed
  layout_changed,   ///< `from` is drained or gone: the item's layout is being replaced
  failed,           ///< a step failed or was not confirmed; the recorded transfer stays
};

/// Moves `units` from bucket `from` to bucket `to` of one layout (docs/split.md, "Moving units
/// between buckets"): recorded at `from` as they leave it, received at `to` once, then the
/// record deleted, each step waiting for the replicas the client waits for before the next
/// builds on it. `error` says why when it failed.
TransferResult move_units(Client& client, const std::string& from, const std::string& to,
                          std::int64_t units, std::string& error);

/// What one bucket's moves hash holds (lua/split_bucket-3.lua).
struct BucketTransfers {
  std::string bucket;
  /// The transfers recorded there and not finished: ("out:<id>", "<units> <destination>").
  std::vector<std::pair<std::string, std::string>> recorded;
  std::string sent;  ///< how many transfers ever left the bucket, as stored ("" for none)
};

/// Reads the moves hash of every bucket of `layout`, pipelined; nullopt with `error` set when
/// one could not be read.
std::optional<std::vector<BucketTransfers>> read_transfers(Client& client,
                                                           const std::string& stock_key,
                                                           const BucketLayout& layout,
                                                           std::string& error);

/// Finishes the transfers `transfers` recorded. Returns how many, or nullopt with `error` set
/// when one could not be finished (it stays recorded).
std::optional<int> finish_recorded(Client& client, const std::vector<BucketTransfers>& transfers,
                                   std::string& error);

/// Finishes every transfer recorded at the buckets of `layout` (a process that sent units and
/// stopped before they arrived). Returns how many it finished, or nullopt with `error` set when
/// one could not be.
std::optional<int> finish_pending_transfers(Client& client, const std::string& stock_key,
                                            const BucketLayout& layout, std::string& error);

/// Brings items to a number of buckets, finishing a split or merge in progress first.
class SplitRunner {
 public:
  /// `request_ttl_s`: the lifetime of the request ledgers whose ids are carried over to the new
  /// layout (--request-ttl of the deductions that wrote them).
  SplitRunner(Client& client, std::vector<SlotRange> ranges, const ChangeLogSettings& log,
              long long request_ttl_s = 86400)
      : client_(client), ranges_(std::move(ranges)), log_(log), request_ttl_s_(request_ttl_s) {}

  /// Splits `item` (key set) over `buckets` buckets (1: merges it into one key). Sets its
  /// status (ok, unlimited, missing, conflict or error), its stock (the total) and, when it is
  /// split, its buckets.
  void run(ItemResult& item, int buckets);

 private:
  enum class Next { again, stop };
  Next begin(ItemResult& item, const std::optional<std::string>& stored,
             const BucketLayout& wanted);
  Next drain(ItemResult& item, const std::string& stored, const SplitRecord& record);
  Next fill(ItemResult& item, const std::string& stored, const SplitRecord& record);
  /// Copies the request ids recorded in the old layout's ledgers (the stock key's, or each old
  /// bucket's) into the ledger of each id's home in the new one, so that a repeat after the
  /// split or merge finds its first answer. HSETNX: safe to run again; false with the item's
  /// error set when a step failed or too few replicas confirmed it.
  bool carry_ledgers(ItemResult& item, const SplitRecord& record);
  /// Finishes the transfers a drain found recorded at bucket `key`; false with the item's
  /// error set when one could not be.
  bool finish_sent(ItemResult& item, const std::string& key, const SplitAnswer& moving);
  /// Adds the change log of old bucket `bucket`, about to be deleted, to the item's own log:
  /// false with the item's error set when that failed or was not confirmed.
  bool keep_bucket_log(ItemResult& item, const std::string& bucket);
  Next item_step(ItemResult& item, const std::string& op, const std::string& expected,
                 const BucketLayout& target, std::int64_t units, const std::string& stop_point);
  void report_done(ItemResult& item, const std::optional<std::string>& stored);

  Client& client_;
  std::vector<SlotRange> ranges_;
  const ChangeLogSettings& log_;
  long long request_ttl_s_;
};

}  // namespace stockctl
