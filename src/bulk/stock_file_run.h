#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "app/context.h"
#include "bulk/store_runner.h"
#include "bulk/validated_rows.h"
#include "core/rebuild_plan.h"
#include "lock/init_lock.h"
#include "options/options.h"

namespace stockctl {

/// What a whole-file write of stock values does: init --file and rebuild --file / --from-cmd.
struct StockFileOptions {
  std::string op;
  SourceOptions source;
  PutMode mode;
  long long ttl_s = 0;
  LockTiming lock;
  bool fail_on_drift = false;
  bool extra = false;  ///< rebuild --extra: report items Redis holds and the source lacks
};

/// True when the options name a source: --file or --from-cmd. Throws InputError for both.
bool has_source(const SourceOptions& options);

/// One whole-file write, in steps: validate() the whole source, then write() it in pipelined
/// windows (or end it as busy() before writing anything). Either end prints the one summary of
/// the run; write() also writes the per-item lines of --report.
class StockFileRun {
 public:
  /// Opens nothing yet: validate() opens the source, so that a source that cannot be opened
  /// ends the run with its summary too.
  StockFileRun(Context& ctx, StockFileOptions options);
  ~StockFileRun();
  StockFileRun(const StockFileRun&) = delete;
  StockFileRun& operator=(const StockFileRun&) = delete;

  /// Reads the whole source before anything is written; throws InputError when rows are
  /// invalid (unless --skip-invalid), once the summary (status "invalid", the invalid rows
  /// counted) is printed and --report holds the invalid rows. A source that cannot be opened
  /// or read (IoError, a failing --from-cmd, InterruptedError) ends with the summary (status
  /// error or interrupted) and an empty --report, and the error is thrown on. Returns how many
  /// rows it has.
  std::size_t validate();
  /// Writes the validated source and returns the run's exit status. `before_window` runs
  /// before each window is sent (rebuild extends its run lock there) and may throw
  /// StockctlError to stop the run; the windows already sent are counted first.
  ExitCode write(const std::function<void()>& before_window = nullptr);
  /// Ends the run before writing anything because another process holds its lock: prints `why`
  /// and a summary with status "busy".
  ExitCode busy(const std::string& why);
  /// Ends the run before writing anything because its lock could not be asked for (an error
  /// reply such as NOPERM, or no reply): prints `why` and a summary with status "error" (exit 1).
  ExitCode failed(const std::string& why);

 private:
  ExitCode end_unwritten(const std::string& status, const std::string& why, ExitCode code);
  Summary summary() const;
  /// Reads the source again and logs the line `line_of` gives each row (counted for the
  /// summary, written to --report; none where it gives nullopt). Throws IoError.
  void report_rows(const std::function<std::optional<ItemResult>(const PutItem&)>& line_of);
  /// Writes each invalid row to --report (and counts it for the summary). Throws IoError.
  void report_invalid_rows();
  /// Writes every row to --report as not applied for `why` with `status` (an invalid row as
  /// invalid), and counts it for the summary. Throws IoError.
  void report_unwritten_rows(Status status, const std::string& why);
  /// Prints the summary of a run that wrote nothing because its source is invalid (or, with
  /// `status`, could not be read: "interrupted", "error").
  void print_refusal(const std::string& why, const std::string& status = "invalid");
  /// Replaces --report with an empty one: the source could not be read, so no row is reported,
  /// and an earlier run's report must not be taken for this one's.
  void replace_report_unread();

  Context& ctx_;
  StockFileOptions options_;
  std::chrono::steady_clock::time_point started_;
  std::unique_ptr<Source> source_;
  RowReader<StockRow> reader_;
  Validation validation_;
};

}  // namespace stockctl
