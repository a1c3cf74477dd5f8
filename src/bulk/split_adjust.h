#pragma once

// deduct and add on a split item (docs/split.md, "Deducting from a split item"): the stock
// script on one bucket at a time, a bucket fixed by the request id when there is one.

#include <map>
#include <optional>
#include <string>

#include "bulk/adjust_runner.h"
#include "core/split_layout.h"
#include "redis/scripts/stock.h"

namespace stockctl {

/// The layout record `item`'s stock key holds when it is split (read now); nullopt when it
/// holds anything else or cannot be read. For an item the stock script refused.
std::optional<std::string> split_record_of(Client& client, const ItemResult& item);

/// The layout records of items that stayed mid-split (a split or merge cut off) through a whole
/// wait of --retry-timeout in this run, by stock key: a later row on the same item that finds
/// the same record is not applied at once, instead of waiting as long again (a file of rows on
/// such an item would wait --retry-timeout per row).
using StuckLayouts = std::map<std::string, std::string>;

/// deduct or add on `item` once the stock script refused it (status error): when its stock key
/// holds a split item's layout record, applies it to the buckets (docs/split.md), and an item
/// merged meanwhile through `runner` as a plain one. Any other error is left as it is. `stuck`,
/// when given, is kept across the items of one run.
void apply_to_split_item(Client& client, OpRunner& runner, OpRunner::Op op,
                         const OpOptions& options, const ChangeLogSettings& log, ItemResult& item,
                         StuckLayouts* stuck = nullptr);

/// Deducts or adds item.qty on a split item.
class SplitAdjust {
 public:
  SplitAdjust(Client& client, OpRunner::Op op, const OpOptions& options,
              const ChangeLogSettings& log)
      : client_(client), op_(op), options_(options), log_(log) {}

  /// Applies `item` (sku, key, qty, request id set) to the split item whose stock key held
  /// `record`: sets its status, its stock (the item's total, read bucket by bucket after the
  /// change) and its buckets. While a split or merge of the item is in progress it waits up to
  /// --retry-timeout. Returns false when the item turned out not to be split (merged
  /// meanwhile): the caller applies it as a plain item.
  bool run(ItemResult& item, std::string record);
  /// Remembers, and honours, the layouts this run waited for in vain (see StuckLayouts).
  void remember_stuck(StuckLayouts* stuck) { stuck_ = stuck; }

 private:
  bool run_on_layouts(ItemResult& item, std::string record);
  /// Whether a bucket of the live `layout` is missing or holds what is not a stock value (nor
  /// a drained bucket's record): then `item` is an error naming it.
  bool bad_bucket(ItemResult& item, const BucketLayout& layout);
  /// Logs one "rebalance" entry on the item for the units this deduction moved between its
  /// buckets (moved_), if any: they changed no total, but each bucket's log shows them leave
  /// or arrive nowhere else.
  void log_moves(const ItemResult& item);
  /// scan_again: a bucket that covered QTY at the scan was emptied before the call reached it
  /// (only inside deduct_with_id).
  enum class Outcome { done, layout_changed, scan_again };
  Outcome attempt(ItemResult& item, const BucketLayout& layout);
  Outcome deduct(ItemResult& item, const BucketLayout& layout, int home);
  Outcome deduct_with_id(ItemResult& item, const BucketLayout& layout, int home);
  /// `final_short`: the scan showed a true shortage (or the id is known), so a short answer is
  /// recorded as the id's answer; otherwise a short answer is not recorded and scans again.
  /// `others`: the other buckets' stock, as the scan read it (for the answer's `stock`).
  Outcome call_with_id(ItemResult& item, const BucketLayout& layout, int home, std::int64_t others,
                       bool final_short);
  enum class Gathered { moved, layout_changed, failed };
  /// Moves into bucket `into` what it lacks of item.qty from the others (transfers recorded at
  /// their source, docs/split.md), by the stocks of a scan. `moved` also when another buyer
  /// emptied a source meanwhile (the caller reads again); `failed` sets the item's error.
  Gathered gather(ItemResult& item, const BucketLayout& layout, int into,
                  const std::vector<std::int64_t>& stocks);
  /// What a bucket's hint key held when a proof peeked at it, and the server's time then (ms).
  struct HintPeek {
    std::string value;
    long long at_ms = 0;
  };
  /// Whether the buckets together hold less than item.qty at one moment (docs/split.md, step
  /// 6). `proven`, with the stocks of the scan that shows it, only when no transfer was
  /// recorded and none left any bucket between a read of the moves hashes before the scan and
  /// one after it: a unit on its way between two buckets is in neither.
  struct ShortCheck {
    enum class Verdict { proven, look_again, layout_changed, failed } verdict;
    std::vector<std::int64_t> stocks;
    /// What each bucket's hint key held before the scan ("" for nothing), with the server's
    /// time of that peek: a hint is left only where nothing was written since, and the peek
    /// is younger than a hint's life (sold_out_hint_call).
    std::optional<std::vector<HintPeek>> peeks{};
  };
  ShortCheck prove_short(ItemResult& item, const BucketLayout& layout);
  Outcome add(ItemResult& item, const BucketLayout& layout, int home);
  /// Every bucket's stock, read now; nullopt with `outcome` layout_changed (a bucket gone or
  /// drained) or done (a bucket could not be read: the item is not applied, saying why).
  std::optional<std::vector<std::int64_t>> scan(ItemResult& item, const BucketLayout& layout,
                                                Outcome& outcome);
  /// The sold-out hints (docs/split.md, "A sold-out item stays cheap"): left in every
  /// bucket's slot once a scan proved the item short, for a second, where no add overtook the
  /// proof and no add runs; read in the home bucket's.
  void leave_sold_out_hints(const ItemResult& item, const BucketLayout& layout,
                            const ShortCheck& check);
  std::optional<std::vector<HintPeek>> peek_hints(const ItemResult& item,
                                                  const BucketLayout& layout);
  std::optional<std::int64_t> read_sold_out_hint(const ItemResult& item, const BucketLayout& layout,
                                                 int home);
  /// Registers ("adding") or unregisters ("added") the add `nonce` on every bucket
  /// (lua/split_bucket-3.lua); failed sets the item not applied.
  enum class Marked { ok, layout_changed, failed };
  /// Registers (`op` "adding") or unregisters ("added") an add on every bucket. Registering
  /// adds the buckets' stocks, as each answered, to `*total` when given.
  Marked mark_add(ItemResult& item, const BucketLayout& layout, const std::string& op,
                  const std::string& nonce, std::int64_t* total = nullptr);
  /// Runs the stock script on bucket `index`; nullopt (item set) for an error, or a layout
  /// that changed (the bucket is gone or drained: `changed` is set). `short_unrecorded`: with
  /// an id, a short answer is not recorded in the ledger (lua/stock-2.lua, ARGV[10]).
  std::optional<StockAnswer> call_bucket(ItemResult& item, const BucketLayout& layout, int index,
                                         bool with_id, bool& changed,
                                         bool short_unrecorded = false);
  void finish_ok(ItemResult& item, const BucketLayout& layout, int index,
                 const StockAnswer& answer);
  /// Whether item.request_id is recorded in `bucket`'s ledgers; nullopt when it was not found
  /// and a ledger could not be read.
  std::optional<bool> ledger_has_id(const ItemResult& item, const std::string& bucket);

  Client& client_;
  OpRunner::Op op_;
  const OpOptions& options_;
  const ChangeLogSettings& log_;
  CallResult last_;         ///< the result of the last bucket call (for --wait-replicas)
  std::int64_t moved_ = 0;  ///< units this deduction moved between the buckets
  StuckLayouts* stuck_ = nullptr;
};

}  // namespace stockctl
