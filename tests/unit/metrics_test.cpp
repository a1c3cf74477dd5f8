#include "output/metrics.h"

#include <doctest/doctest.h>

#include <sstream>

#include "output/progress.h"

using namespace stockctl;

namespace {
RunMetrics run_with(int exit_code) {
  RunMetrics m;
  m.op = "rebuild";
  m.stats.add(Status::ok);
  m.stats.add(Status::drift);
  m.stats.add(Status::drift);
  m.duration_seconds = 1.5;
  m.exit_code = exit_code;
  m.finished = 1700000000;
  return m;
}
}  // namespace

TEST_CASE("metrics are Prometheus text with counts, drift, duration and timestamps") {
  std::string text = render_metrics(run_with(0), std::nullopt);
  CHECK(text.find("# TYPE stockctl_items gauge\n") != std::string::npos);
  CHECK(text.find("stockctl_items{op=\"rebuild\",status=\"ok\"} 1\n") != std::string::npos);
  CHECK(text.find("stockctl_items{op=\"rebuild\",status=\"busy\"} 0\n") != std::string::npos);
  CHECK(text.find("stockctl_drift_items{op=\"rebuild\"} 2\n") != std::string::npos);
  CHECK(text.find("stockctl_run_duration_seconds{op=\"rebuild\"} 1.500\n") != std::string::npos);
  CHECK(text.find("stockctl_last_success_timestamp_seconds{op=\"rebuild\"} 1700000000\n") !=
        std::string::npos);
}

TEST_CASE("a failed run keeps the earlier success timestamp") {
  std::string text = render_metrics(run_with(6), 1600000000.0);
  CHECK(text.find("stockctl_last_exit_code{op=\"rebuild\"} 6\n") != std::string::npos);
  CHECK(text.find("stockctl_last_success_timestamp_seconds{op=\"rebuild\"} 1600000000\n") !=
        std::string::npos);
  CHECK(render_metrics(run_with(1), std::nullopt).find("last_success") == std::string::npos);
}

TEST_CASE("the last success is read back per op") {
  std::istringstream in(render_metrics(run_with(0), std::nullopt));
  CHECK(read_last_success(in, "rebuild") == 1700000000.0);
  std::istringstream other(render_metrics(run_with(0), std::nullopt));
  CHECK_FALSE(read_last_success(other, "init").has_value());
}

TEST_CASE("progress lines show rows, rate and time left") {
  CHECK(progress_line("init", 250, 1000, 2.0) == "init: 250/1000 rows (25%), 125 rows/s, 6s left");
  CHECK(progress_line("validating a.csv", 500, 0, 1.0) == "validating a.csv: 500 rows, 500 rows/s");
  CHECK(progress_line("init", 0, 10, 0.0) == "init: 0/10 rows (0%), 0 rows/s, ? left");
}
