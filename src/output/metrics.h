#pragma once

#include <ctime>
#include <istream>
#include <optional>
#include <string>

#include "output/atomic_file.h"
#include "output/run_stats.h"

namespace stockctl {

/// One run's figures for --metrics-file.
struct RunMetrics {
  std::string op;
  RunStats stats;
  double duration_seconds = 0;
  int exit_code = 0;
  std::time_t finished = 0;
  std::string extra;  ///< appended as it is (a command's own gauges)
};

/// The run's figures in Prometheus text exposition format: items per status, drift, duration,
/// exit code, and the timestamps of this run and of the last successful one (this run when it
/// exited 0, else `previous_success`).
std::string render_metrics(const RunMetrics& metrics, std::optional<double> previous_success);

/// The last-success timestamp for `op` in an earlier metrics file, if it has one.
std::optional<double> read_last_success(std::istream& in, const std::string& op);

/// Writes the metrics to `path` atomically (a temporary file beside it, then rename), keeping
/// the earlier last-success timestamp when this run failed; through `opened` when the file was
/// opened already (a FIFO or device, opened when the run started). Throws IoError.
void write_metrics_file(const std::string& path, const RunMetrics& metrics,
                        AtomicFile* opened = nullptr);

}  // namespace stockctl
