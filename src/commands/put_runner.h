#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/diagnostics.h"
#include "commands/context.h"
#include "core/rebuild_plan.h"
#include "lock/init_lock.h"
#include "output/json_writer.h"

namespace stockctl {

/// One item to store, with the value to store.
struct PutItem {
  ItemResult result;
  std::int64_t value = 0;
  bool pending = true;  ///< false when already decided (an invalid row)
};

/// Writes windows of items with the put script (init and rebuild), retrying items whose init
/// lock is held until `lock.wait_ms` passes.
class PutRunner {
 public:
  PutRunner(Client& client, const PutMode& mode, long long ttl_s, const LockTiming& lock)
      : client_(client), mode_(mode), ttl_s_(ttl_s), lock_(lock) {}

  void run(std::vector<PutItem>& items);

 private:
  /// init: one plain SET [NX] GET per item. Returns the items it could not handle that way.
  std::vector<PutItem*> set_directly(const std::vector<PutItem*>& pending);
  /// rebuild: one GET per item; returns the items that need the put script (missing keys, and
  /// with --force the ones that differ) and classifies the rest.
  std::vector<PutItem*> look_up(const std::vector<PutItem*>& pending);
  /// Writes items with the put script, waiting out init locks held by others.
  void run_script(const std::vector<PutItem*>& sent);
  Call call_for(const PutItem& item) const;
  void apply(PutItem& item, const CallResult& result) const;
  void wait_for_lock_holders(std::vector<PutItem*>& locked);

  Client& client_;
  PutMode mode_;
  long long ttl_s_;
  LockTiming lock_;
  bool set_get_refused_ = false;  ///< the server predates SET NX GET (Redis < 7.0)
};

/// Tallies and records the items of a file run: counts per status, the exit code, and the
/// optional --report file.
class FileRunLog {
 public:
  FileRunLog(const std::string& report_path, bool fail_on_drift);
  void add(const ItemResult& item);
  /// Commits the report; throws IoError.
  void finish();
  const std::map<Status, std::size_t>& counts() const { return counts_; }
  std::size_t rows() const { return rows_; }
  ExitFold& fold() { return fold_; }

 private:
  std::unique_ptr<ReportFile> report_;
  std::map<Status, std::size_t> counts_;
  std::size_t rows_ = 0;
  ItemErrorEcho errors_;
  ExitFold fold_;
};

}  // namespace stockctl
