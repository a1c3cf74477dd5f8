#include "output/metrics.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "base/errors.h"
#include "output/atomic_file.h"

namespace stockctl {
namespace {

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

// Only a file holds the last run's figures: reading a FIFO would take bytes meant for its
// reader. What cannot be written says so when it is opened for writing.
bool holds_last_run(const std::string& path) {
  try {
    return resolve_output(path).mode == OutputMode::replace;
  } catch (const IoError&) {
    return false;
  }
}

}  // namespace

std::string render_metrics(const RunMetrics& m, std::optional<double> previous_success) {
  std::string out;
  const std::string op = m.op.empty() ? "none" : m.op;
  family(out, "stockctl_items", "gauge", "Items handled by the last run, by status.");
  for (Status status : kAllStatuses) {
    auto it = m.stats.counts.find(status);
    out += fmt::format("stockctl_items{{op=\"{}\",status=\"{}\"}} {}\n", op, status_name(status),
                       it == m.stats.counts.end() ? 0 : it->second);
  }
  auto drift = m.stats.counts.find(Status::drift);
  family(out, "stockctl_drift_items", "gauge", "Live keys that differed from the export.");
  out += fmt::format("stockctl_drift_items{{op=\"{}\"}} {}\n", op,
                     drift == m.stats.counts.end() ? 0 : drift->second);
  family(out, "stockctl_run_duration_seconds", "gauge", "Wall time of the last run.");
  out += fmt::format("stockctl_run_duration_seconds{{op=\"{}\"}} {:.3f}\n", op, m.duration_seconds);
  family(out, "stockctl_last_exit_code", "gauge", "Exit status of the last run.");
  out += fmt::format("stockctl_last_exit_code{{op=\"{}\"}} {}\n", op, m.exit_code);
  family(out, "stockctl_last_run_timestamp_seconds", "gauge", "When the last run ended.");
  out += fmt::format("stockctl_last_run_timestamp_seconds{{op=\"{}\"}} {}\n", op,
                     static_cast<long long>(m.finished));
  std::optional<double> success = previous_success;
  if (m.exit_code == 0) success = static_cast<double>(m.finished);
  if (success) {
    family(out, "stockctl_last_success_timestamp_seconds", "gauge",
           "When a run last ended with exit status 0.");
    out += fmt::format("stockctl_last_success_timestamp_seconds{{op=\"{}\"}} {}\n", op,
                       static_cast<long long>(*success));
  }
  return out + m.extra;
}

std::optional<double> read_last_success(std::istream& in, const std::string& op) {
  const std::string prefix =
      fmt::format("stockctl_last_success_timestamp_seconds{{op=\"{}\"}} ", op);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, prefix.size(), prefix) != 0) continue;
    try {
      return std::stod(line.substr(prefix.size()));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

void write_metrics_file(const std::string& path, const RunMetrics& metrics, AtomicFile* opened) {
  std::optional<double> previous;
  if (holds_last_run(path)) {
    if (std::ifstream old(path); old) previous = read_last_success(old, metrics.op);
  }
  const std::string text = render_metrics(metrics, previous);
  // node_exporter's textfile collector only reads *.prom, so the temporary name of a replaced
  // file is never read half written.
  if (opened != nullptr) {
    opened->write(text);
    opened->commit();
    return;
  }
  AtomicFile file(path, "metrics file ");
  file.write(text);
  file.commit();
}

}  // namespace stockctl
