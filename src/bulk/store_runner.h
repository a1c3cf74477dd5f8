#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "app/context.h"
#include "base/diagnostics.h"
#include "core/change_log.h"
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

/// Writes windows of items for init and rebuild, keeping up to two windows in flight so the
/// server works on one while the caller reads the next. Each window goes through steps, each
/// one pipelined, and only the items that need it go on to the next step:
///   init:    SET NX (SET GET with --force) -> GET for the keys that existed -> put script
///   rebuild: GET -> put script for missing keys (and, with --force, differing ones, or every
///            live one when --ttl is given)
/// The put script (about ten times the server's cost of a plain SET or GET) runs only where an
/// atomic create-if-missing under the init lock is needed; items whose init lock is held are
/// retried until `lock.wait_ms` passes.
class PutRunner {
 public:
  using Done = std::function<void(std::vector<PutItem>&)>;

  PutRunner(Client& client, const PutMode& mode, long long ttl_s, const LockTiming& lock)
      : client_(client), mode_(mode), ttl_s_(ttl_s), lock_(lock) {}

  /// Logs every change in the items' change logs as `change` ("init", "rebuild"). A logged
  /// write goes through the put script, which appends the entry in the same step.
  void set_change_log(const ChangeLogSettings& log, std::string change) {
    log_ = log;
    change_ = std::move(change);
  }

  /// Starts writing `window`; hands earlier windows to `done`, in order, once they are written.
  void submit(std::vector<PutItem> window, const Done& done);
  /// Writes everything submitted and hands it to `done`.
  void finish(const Done& done);
  /// Writes one window and waits for it.
  void run(std::vector<PutItem>& items);

 private:
  enum class Step { set, get, script };
  struct Window {
    std::vector<PutItem> items;
    Step step = Step::set;
    std::vector<PutItem*> sent;  ///< the items of the step on the wire
    bool written = false;
  };

  /// Starts `step` for `items` of the window, or marks it written when there are none.
  void begin(Window& window, Step step, std::vector<PutItem*> items);
  /// Reads the oldest step on the wire and starts the window's next step.
  void complete_oldest_step();
  void hand_over(const Done& done);
  Call call_for(Step step, const PutItem& item) const;
  /// Each returns the items that need the next step.
  std::vector<PutItem*> apply_set(const std::vector<PutItem*>& sent,
                                  std::vector<CallResult>& results);
  std::vector<PutItem*> apply_get(const std::vector<PutItem*>& sent,
                                  const std::vector<CallResult>& results) const;
  void apply_script(PutItem& item, const CallResult& result) const;
  void wait_for_lock_holders(std::vector<PutItem*>& locked);

  Client& client_;
  PutMode mode_;
  long long ttl_s_;
  LockTiming lock_;
  bool set_get_refused_ = false;  ///< the server predates SET GET (Redis < 6.2)
  std::deque<Window> windows_;    ///< submitted, not yet handed over
  std::deque<Window*> wire_;      ///< steps started on the client, oldest first
  ChangeLogSettings log_{false, 0, {}, {}};
  std::string change_;
};

/// Tallies and records the items of a file run: counts per status, the exit code, and the
/// optional --report file.
class FileRunLog {
 public:
  FileRunLog(const std::string& report_path, bool fail_on_drift);
  /// Counts and records an item; an error is echoed on standard error unless `echo` is false
  /// (rows not sent, whose one reason was said once).
  void add(const ItemResult& item, bool echo = true);
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
