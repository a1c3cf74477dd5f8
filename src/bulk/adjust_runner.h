#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/context.h"
#include "core/change_log.h"
#include "core/outcome.h"
#include "core/quantity.h"
#include "lock/init_lock.h"
#include "sources/rows.h"

namespace stockctl {

/// Where a missing item's initial stock comes from (deduct and add).
struct InitSource {
  std::string value;    ///< --init-value, as typed
  std::string file;     ///< --init-from
  std::string command;  ///< --init-cmd
  std::string format;   ///< --format for --init-from
  SourceColumns columns;

  bool given() const { return !value.empty() || !file.empty() || !command.empty(); }
};

/// Options shared by deduct and add.
struct OpOptions {
  std::string sku;
  std::string qty;
  InitSource init;
  long long ttl_s = 0;
  LockTiming lock;
  std::string request_id;           ///< --request-id (single item)
  bool request_id_given = false;    ///< --request-id was given, even as '' (which is invalid)
  long long request_ttl_s = 86400;  ///< --request-ttl
};

/// Checks the init source options; throws InputError.
void validate_init_source(const InitSource& init);

/// Throws InputError when --init-from cannot serve once a key is missing: a directory, a name
/// whose format cannot be told (with its --format), a file that cannot be opened, or standard
/// input that --file (`source_file`) reads too. Call once the format and columns are set.
void check_init_file(const InitSource& init, const std::string& source_file);

class InitFileIndex;

/// A missing item's initial stock, read from the init source (hold and order: per line);
/// --init-from's file is indexed on first use. Call only while holding the item's init lock.
class InitialStock {
 public:
  InitialStock(const InitSource& init, const KeyScheme& scheme);
  ~InitialStock();
  InitialStock(const InitialStock&) = delete;
  InitialStock& operator=(const InitialStock&) = delete;
  /// The stock to create `sku` with, or why there is none (--init-cmd must end by `deadline`).
  ParsedNumber of(const std::string& sku, std::chrono::steady_clock::time_point deadline);
  /// What a failed of(sku) is: `invalid` for an --init-from row that is invalid input (named by
  /// file and line), `error` for the rest (no row, a failed --init-cmd).
  Status failure_status(const std::string& sku) const;

 private:
  const InitSource& init_;
  const KeyScheme& scheme_;
  std::unique_ptr<InitFileIndex> index_;
};

/// The keys a stock script call sends, in the script's KEYS order: the stock key, then the
/// request ledger only when the item has a request id, then the change log when it is written.
/// Sending no key the call does not need
/// keeps it a single-key command on a cluster: while its slot migrates it follows ASK at once
/// instead of being answered TRYAGAIN until the whole slot has moved.
std::vector<std::string> stock_call_keys(const ItemResult& item, bool with_log = false);

/// Runs deduct or add for windows of items: one pipeline per window, then the init lock
/// protocol for each item whose key is missing and that can be initialized.
class OpRunner {
 public:
  enum class Op { deduct, add };
  using Item = ItemResult;
  OpRunner(Client& client, Op op, const OpOptions& options, const KeyScheme& scheme);
  ~OpRunner();
  OpRunner(const OpRunner&) = delete;
  OpRunner& operator=(const OpRunner&) = delete;

  /// Logs every change in the items' change logs (off by default: bench writes none).
  void set_change_log(const ChangeLogSettings& log) { log_ = log; }

  /// Applies every item (sku, key and qty set) now, windows started before still in flight,
  /// and fills in its status and stock.
  void run(std::vector<ItemResult>& items);
  /// run() in two halves, so a batch can send its next window before reading this one's
  /// replies: start() sends the items that have a qty (the others are already decided),
  /// finish() applies the replies and runs the init lock protocol where keys are missing.
  /// Windows are finished in the order they were started.
  void start(const std::vector<ItemResult>& items);
  void finish(std::vector<ItemResult>& items);

 private:
  Call call_for(const ItemResult& item, const std::string& init) const;
  std::vector<Call> calls_for(const std::vector<ItemResult>& items) const;
  /// Applies the replies to the items that were sent (those with a qty), then runs the init
  /// lock protocol where keys are missing.
  void apply_replies(std::vector<ItemResult>& items, const std::vector<CallResult>& results);
  void apply(ItemResult& item, const CallResult& result) const;
  /// After a WRONGTYPE: names the key of another type, and whether the change was applied.
  void name_wrong_type(ItemResult& item) const;
  void apply_once(ItemResult& item, const std::string& init);
  void initialize(ItemResult& item);
  void initialize_locked(ItemResult& item, std::chrono::steady_clock::time_point lock_expiry);
  ParsedNumber initial_stock(const std::string& sku,
                             std::chrono::steady_clock::time_point deadline) const;
  // Only an init source creates a key: add without one answers missing, as deduct answers
  // uninitialized.
  bool can_initialize() const { return options_.init.given(); }
  // What the script's "not initialized" answer became for this op (missing for add).
  bool key_missing(const ItemResult& item) const {
    return item.status == (op_ == Op::add ? Status::missing : Status::uninitialized);
  }

  Client& client_;
  Op op_;
  const OpOptions& options_;
  const KeyScheme& scheme_;
  std::unique_ptr<InitFileIndex> init_index_;  ///< --init-from, read on the first missing item
  ChangeLogSettings log_{false, 0, {}, {}};
};

}  // namespace stockctl
