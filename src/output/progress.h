#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace stockctl {

/// The progress line: "LABEL: DONE/TOTAL rows (P%), R rows/s, Ns left", or without total,
/// percentage and estimate when the total is unknown (0).
std::string progress_line(const std::string& label, std::size_t done, std::size_t total,
                          double elapsed_seconds);

/// Shows progress of long work on standard error, redrawn in place at most five times a
/// second — only when standard error is a terminal and --quiet is not given, so cron and pipes
/// see nothing. The line is cleared when the work ends.
class Progress {
 public:
  Progress(std::string label, std::size_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::size_t rows);

 private:
  using clock = std::chrono::steady_clock;
  std::string label_;
  std::size_t total_;
  std::size_t done_ = 0;
  bool enabled_;
  bool drawn_ = false;
  clock::time_point started_ = clock::now();
  clock::time_point next_draw_;
};

}  // namespace stockctl
