#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/change_log.h"
#include "core/outcome.h"
#include "core/rebuild_plan.h"
#include "core/sku.h"
#include "core/split_layout.h"
#include "lock/init_lock.h"
#include "redis/client.h"
#include "redis/started_windows.h"

namespace stockctl {

/// One item to store, with the value to store.
struct PutItem {
  ItemResult result;
  std::int64_t value = 0;
  bool counts_held = false;  ///< `value` is total - issued: held units are left out of it
  bool pending = true;       ///< false when already decided (an invalid row)
  bool after_unknown =
      false;  ///< SET NX or the load found the key on a retry after an unknown outcome
  /// Split over this many buckets once written (a source's `buckets` column); 0: as it is.
  int buckets = 0;
  bool layout_set = false;  ///< a forced write of a split item split it again already
};

/// Writes windows of items for init and rebuild. Each window goes through steps, each one
/// pipelined, and only the items that need it go on to the next step:
///   init:    SET NX -> GET for the keys that existed; with --force, a change log or values
///            that count held units (total - issued), the put script alone
///   rebuild: GET -> put script for missing keys (and, with --force, differing ones, those
///            with holds, whose expired ones it gives back first, or every live one when --ttl
///            is given; for values that count held units, every one that differs, as the
///            script compares without the held units)
/// A split item (docs/split.md) is judged on its total, read bucket by bucket once its window's
/// steps are read; a forced write merges its buckets, writes, and splits it again as it was.
/// The put script (about ten times the server's cost of a plain SET or GET) runs only where an
/// atomic create-if-missing under the init lock is needed; items whose init lock is held are
/// retried until `lock.wait_ms` passes. A window's next step is sent as soon as its previous
/// one is read, behind the steps of later windows already on the wire.
class PutRunner {
 public:
  using Item = PutItem;

  PutRunner(Client& client, const PutMode& mode, long long ttl_s, const LockTiming& lock)
      : client_(client), mode_(mode), ttl_s_(ttl_s), lock_(lock) {}

  /// Logs every change in the items' change logs as `change` ("init", "rebuild"). A logged
  /// write goes through a script that appends the entry in the same step: the load script for
  /// the keys SET NX would create, else the put script.
  void set_change_log(const ChangeLogSettings& log, std::string change) {
    log_ = log;
    change_ = std::move(change);
  }

  /// The key scheme of the items, whose indexes of items with holds say whether a missing key
  /// may still have holds (may_have_holds). Without it every missing key is taken to have none.
  void set_key_scheme(const KeyScheme& scheme) { scheme_ = scheme; }

  /// Sends the first step of `items` (those still pending). `items` must stay in place until
  /// finish() is called for it.
  void start(std::vector<PutItem>& items);
  /// Reads steps, oldest first, until `items` (the oldest started window) is written.
  void finish(std::vector<PutItem>& items);
  /// Writes one window and waits for it.
  void run(std::vector<PutItem>& items);

 private:
  enum class Step { set, mset, load, get, script };
  struct Window {
    std::uint64_t id = 0;
    std::vector<PutItem>* items = nullptr;
    Step step = Step::set;
    std::vector<PutItem*> sent;  ///< the items of the step on the wire
    /// Step::mset and Step::load: the items of each call, in `sent` order.
    std::vector<std::size_t> batches;
    bool written = false;
  };

  /// Starts `step` for `items` of the window, or marks it written when there are none.
  void begin(Window& window, Step step, std::vector<PutItem*> items);
  /// Reads the oldest step on the wire and starts the window's next step.
  void complete_oldest_step();
  Call call_for(Step step, const PutItem& item) const;
  /// Starts the load step: plain MSETNX calls of the items' stock keys and first entries
  /// (begin_mset), or without the servers' clocks and for keys with an expiry, calls of the load
  /// script.
  void begin_load(Window& window, std::vector<PutItem*> items);
  /// The items by the calls that may carry them: any together on one server, a slot's on a
  /// cluster.
  std::map<int, std::vector<PutItem*>> call_groups(const std::vector<PutItem*>& items);
  /// Starts the load script's step for the groups' items, or marks the window written when there
  /// are none.
  void begin_load_script(Window& window, const std::map<int, std::vector<PutItem*>>& groups);
  /// Starts the mset step: each call one MSETNX of up to kLoadBatch items' stock keys and first
  /// entries, timed by the clock of the server that takes them. False, with nothing started,
  /// when a server's clock is not known.
  bool begin_mset(Window& window, const std::map<int, std::vector<PutItem*>>& groups);
  /// The items of MSETNX calls that set nothing (a key was there): they go to the load script.
  std::vector<PutItem*> apply_mset(const Window& window, const std::vector<PutItem*>& sent,
                                   const std::vector<CallResult>& results) const;
  std::vector<PutItem*> apply_load(const Window& window, const std::vector<PutItem*>& sent,
                                   const std::vector<CallResult>& results) const;
  /// What the mset and load steps share: each row's verdict from its call's reply.
  template <typename Created>
  std::vector<PutItem*> apply_batches(const Window& window, const std::vector<PutItem*>& sent,
                                      const std::vector<CallResult>& results, Created created,
                                      std::string (*unexpected)(const Reply&)) const;
  /// Reads the clock (TIME) of the server, or of every primary of a cluster, once.
  void read_clocks();
  /// The clock now, in ms, of the server that holds `slot` (any slot on one server): its TIME
  /// carried on by this process's steady clock; nullopt when it could not be read.
  std::optional<std::int64_t> server_now_ms(int slot);
  /// Whether the GET step also asks whether each item has holds (EXISTS of its holds key, sent
  /// before its GET): a forced write (or its dry run) may skip the put script only for an item
  /// without any.
  bool reads_holds() const;
  static Call holds_call(const PutItem& item);
  /// Each returns the items that need the next step.
  std::vector<PutItem*> apply_set(const std::vector<PutItem*>& sent,
                                  std::vector<CallResult>& results) const;
  std::vector<PutItem*> apply_get(const std::vector<PutItem*>& sent,
                                  const std::vector<CallResult>& results);
  void apply_script(PutItem& item, const CallResult& result);
  /// The layout record a put script's answer says it kept (a split item), or nullopt.
  static std::optional<std::string> split_record_kept(const CallResult& result);
  void wait_for_lock_holders(std::vector<PutItem*>& locked);
  /// The split items found by the steps read so far, each with its layout record: their
  /// verdicts, from their totals (settle_split_items), once the steps of the window are read.
  void settle_split_items();
  void judge_split_item(PutItem& item, const std::string& record);
  void force_split_item(PutItem& item, const std::string& record);
  /// Splits `r`'s item, just written (`written` says so in an error), over `buckets` buckets
  /// with the steps of `split`; an error names the `split` command that finishes it.
  void split_after_write(ItemResult& r, int buckets, const std::string& written);
  /// Splits the items of `items` written now whose row asked for buckets (split_written).
  void split_written(std::vector<PutItem>& items);
  bool is_cluster();
  const std::vector<SlotRange>& slot_ranges();
  /// Whether any of `items` may have holds: its slot's index of items with holds exists (one
  /// Redis: the one index), each slot read once a run. Such a window's missing keys go through
  /// the put script, which settles their holds, and not SET NX, MSETNX or the load script.
  bool may_have_holds(const std::vector<PutItem*>& items);

  Client& client_;
  PutMode mode_;
  long long ttl_s_;
  LockTiming lock_;
  StartedWindows<Window> windows_;  ///< started, not yet finished
  /// The window of each step started on the client, oldest first: the client hands back its
  /// windows of calls in the order they were started, and a window's steps interleave with
  /// those of later windows.
  std::deque<Window*> wire_;
  ChangeLogSettings log_{false, 0, {}, {}};
  std::optional<bool> cluster_;  ///< asked of the client once, when first needed
  std::string change_;
  std::vector<std::pair<PutItem*, std::string>> split_found_;
  std::optional<std::vector<SlotRange>> ranges_;  ///< read once, when a split needs them
  struct ServerClock {
    std::int64_t ms = 0;  ///< the server's TIME, in ms
    std::chrono::steady_clock::time_point read_at;
  };
  std::map<std::string, ServerClock> clocks_;  ///< by node ("" on one server), read once
  bool clocks_read_ = false;
  std::optional<KeyScheme> scheme_;
  /// Per slot (one Redis: slot 0): 1 its index of items with holds exists, 0 it does not, -1
  /// not read yet.
  std::vector<signed char> holds_in_slot_;
};

}  // namespace stockctl
