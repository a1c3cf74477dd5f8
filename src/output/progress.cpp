#include "output/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "base/diagnostics.h"

namespace stockctl {

std::string progress_line(const std::string& label, std::size_t done, std::size_t total,
                          double elapsed) {
  double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  if (total == 0) return fmt::format("{}: {} rows, {:.0f} rows/s", label, done, rate);
  double percent = 100.0 * static_cast<double>(done) / static_cast<double>(total);
  std::string eta = "?";
  if (rate > 0) eta = fmt::format("{:.0f}s", static_cast<double>(total - done) / rate);
  return fmt::format("{}: {}/{} rows ({:.0f}%), {:.0f} rows/s, {} left", label, done, total,
                     percent, rate, eta);
}

Progress::Progress(std::string label, std::size_t total)
    : label_(std::move(label)),
      total_(total),
      enabled_(isatty(STDERR_FILENO) == 1 && verbosity() != Verbosity::quiet),
      next_draw_(started_ + std::chrono::milliseconds(200)) {}

Progress::~Progress() {
  if (drawn_) std::fputs("\r\033[K", stderr);
}

void Progress::advance(std::size_t rows) {
  done_ += rows;
  if (!enabled_) return;
  auto now = clock::now();
  if (now < next_draw_) return;
  next_draw_ = now + std::chrono::milliseconds(200);
  double elapsed = std::chrono::duration<double>(now - started_).count();
  fmt::print(stderr, "\r\033[K{}", progress_line(label_, done_, total_, elapsed));
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace stockctl
