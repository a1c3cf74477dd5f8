#pragma once

#include <string>

#include "app/context.h"
#include "cli/common_options.h"
#include "core/rebuild_plan.h"
#include "lock/init_lock.h"

namespace stockctl {

/// A whole-file write of stock values: init --file and rebuild --file.
struct StockFileRun {
  std::string op;
  SourceOptions source;
  PutMode mode;
  long long ttl_s = 0;
  LockTiming lock;
  bool fail_on_drift = false;
  bool extra = false;  ///< rebuild --extra: report items Redis holds and the source lacks
};

/// Declares --from-cmd and --from-cmd-timeout (init, rebuild; after add_source_options).
void add_from_cmd_options(CLI::App& app, SourceOptions& options);

/// True when the options name a source: --file or --from-cmd. Throws InputError for both.
bool has_source(const SourceOptions& options);

/// Validates the whole source, then writes it in pipelined windows; prints one summary and
/// writes per-item lines to --report. `each_window` runs before every window (rebuild takes or
/// extends its run-wide lock there).
ExitCode run_stock_file(Context& ctx, const StockFileRun& run,
                        const std::function<void()>& each_window = nullptr);

}  // namespace stockctl
