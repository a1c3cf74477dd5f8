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

std::string bench_progress_line(long long done, long long total, double elapsed, double duration) {
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  if (duration > 0) {
    const double shown = elapsed < duration ? elapsed : duration;
    return fmt::format("bench: {:.1f}/{:.1f} s ({:.0f}%), {} requests, {:.0f} requests/s", shown,
                       duration, 100.0 * shown / duration, done, rate);
  }
  const double percent = total > 0 ? 100.0 * static_cast<double>(done < total ? done : total) /
                                         static_cast<double>(total)
                                   : 100.0;
  return fmt::format("bench: {}/{} requests ({:.0f}%), {:.0f} requests/s", done, total, percent,
                     rate);
}

StatusLine::StatusLine()
    : enabled_(isatty(STDERR_FILENO) == 1 && verbosity() != Verbosity::quiet),
      next_draw_(clock::now() + std::chrono::milliseconds(200)) {}

bool StatusLine::due() {
  if (!enabled_) return false;
  auto now = clock::now();
  if (now < next_draw_) return false;
  next_draw_ = now + std::chrono::milliseconds(200);
  return true;
}

void StatusLine::draw(const std::string& text) {
  if (!enabled_) return;
  fmt::print(stderr, "\r\033[K{}", text);
  std::fflush(stderr);
  drawn_ = true;
}

void StatusLine::clear() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

RequestProgress::RequestProgress(long long total_requests, double duration_seconds)
    : total_(duration_seconds > 0 ? 0 : total_requests), duration_s_(duration_seconds) {}

void RequestProgress::answered(bool drawer) {
  done_.fetch_add(1, std::memory_order_relaxed);
  if (drawer && line_.due()) line_.draw(text());
}

void RequestProgress::finish() {
  line_.draw(text());
  line_.clear();
}

std::string RequestProgress::text() const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  return bench_progress_line(done_.load(std::memory_order_relaxed), total_, elapsed, duration_s_);
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
